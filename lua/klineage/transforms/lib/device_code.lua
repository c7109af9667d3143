-- Which functions of a unit run on the GPU. Transforms edit device code
-- only: an intrinsic in a host function does not compile, and a pragma on
-- a host loop cannot change the kernel. Device code is a __global__ or
-- __device__ function (__host__ __device__ included), its qualifier
-- written out or through a macro (#define DEV __device__ __forceinline__);
-- a plain function, main and a __host__ function are host code.
--
--   device_code.rule(unit) -> rule, with
--     rule.is_device(fn) -> true when fn is device code
--     rule.in_host(site) -> the name of the host function the site is in,
--       or nil: by the site's function name (when no device function has
--       that name) or its line (when no device function spans it too)
local M = {}

local QUALIFIER = { __device__ = true, __global__ = true }

-- Object-like macros whose expansion reaches __device__ or __global__,
-- through other macros too.
local function qualifier_macros(unit)
  local words = {}
  for _, d in ipairs(unit:defines()) do
    if not d.function_like then
      local w = {}
      for word in d.value.text:gmatch("[%a_][%w_]*") do w[#w + 1] = word end
      words[d.name.text] = w
    end
  end
  local out, changed = {}, true
  while changed do
    changed = false
    for name, w in pairs(words) do
      if not out[name] then
        for _, word in ipairs(w) do
          if QUALIFIER[word] or out[word] then out[name], changed = true, true break end
        end
      end
    end
  end
  return out
end

function M.rule(unit)
  local macros -- read on first need: most functions say their qualifier
  local rule = {}

  function rule.is_device(fn)
    local info = fn:info()
    if info.global or info.device then return true end
    macros = macros or qualifier_macros(unit)
    -- A macro the parser does not expand lands in the qualifiers or the
    -- return type's text (DEV float f(...)).
    for _, field in ipairs({ "qualifiers", "type" }) do
      local part = fn:field(field)
      for word in (part and part:text() or ""):gmatch("[%a_][%w_]*") do
        if QUALIFIER[word] or macros[word] then return true end
      end
    end
    return false
  end

  local host, device_names, device_lines = {}, {}, {}
  for _, fn in ipairs(unit:functions()) do
    local first, _, last = fn:range()
    local name = fn:name()
    if rule.is_device(fn) then
      if name then device_names[name] = true end
      device_lines[#device_lines + 1] = { first, last }
    elseif fn:body() then
      host[#host + 1] = { name = name, first = first, last = last }
    end
  end

  local function device_line(line)
    for _, span in ipairs(device_lines) do
      if line >= span[1] and line <= span[2] then return true end
    end
    return false
  end

  function rule.in_host(site)
    for _, h in ipairs(host) do
      if site.fn and site.fn == h.name and not device_names[h.name] then return h.name end
      if site.line and site.line >= h.first and site.line <= h.last and not device_line(site.line) then return h.name end
    end
  end

  return rule
end

return M
