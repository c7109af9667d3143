-- What a tuning knob is, for retune: a #define whose value may change
-- while the kernel still computes the same thing. A knob reaches the
-- launch geometry or a shared-memory size (through the @kl launch line,
-- a __shared__ array's extent, or the kernel's own arithmetic on
-- threadIdx, blockIdx and blockDim), and every use of it, and of the
-- defines built from it, scales. What is not a knob, whatever its value:
--   * a problem size: a host function uses it outside a launch's
--     configuration and a dim3, a global index is compared with it, or
--     the launch's grid divides it up (grid(cdiv(N, 16)), a dividend of
--     defines alone);
--   * a hardware constant: a warp-size or lane name, an argument of a warp
--     intrinsic (__shfl*_sync, __ballot_sync, ...), 32 dividing a thread
--     index (threadIdx.x % WARP), or a comparison with 32 or warpSize
--     outside a static_assert (those layout.consistent checks per value);
--   * a library fragment shape: a template argument of wmma::fragment or
--     of an mma shape;
--   * a block extent where the launch writes the block shape as literals
--     (block(16, 16) on the @kl launch line, or a host <<<g, 256>>>) while
--     the kernel indexes its threads with the define.
--
--   knobs.why_not(unit, ann, reach, define) -> nil | why (one sentence
--       naming the use and its line). ann: annotations.parse of the text;
--       reach: layout.closure(unit:defines()); define: an entry of
--       unit:defines().
--   knobs.reaches(unit, ann, reach, name) -> nil | what: "the launch",
--       "a shared array's extent" or "the launch geometry through the
--       kernel's arithmetic (line N)" (with threadIdx, blockIdx, blockDim or
--       a name of the launch line, not one built from this define)
local layout = require "klineage.transforms.lib.layout"

local M = {}

local INTRINSIC = { "^__shfl", "^__ballot", "^__reduce_", "^__match_", "^__any_sync$", "^__all_sync$", "^__activemask$",
                    "^__syncwarp$" }
local HARDWARE_NAME = { "WARP_?SIZE", "WARPSZ", "^LANES?$", "LANE_?COUNT", "^WS$" }
local COMPARE = { ["<"] = true, [">"] = true, ["<="] = true, [">="] = true, ["=="] = true, ["!="] = true }
local THREAD = { "threadIdx", "blockIdx", "blockDim" }

local function mentions(text, list)
  for _, w in ipairs(list) do if text:find(w, 1, true) then return true end end
  return false
end

local function unwrap_up(n)
  local p = n:parent()
  while p and p.kind == "paren" do n, p = p, p:parent() end
  return p, n
end

-- The whole expression around a node (up to its statement, declarator or
-- condition): its text says what the expression works on.
local EXPR = { binary = true, unary = true, postfix = true, paren = true, call = true, index = true, member = true,
               assign = true, ternary = true, cast = true, cxx_cast = true, init_list = true, ident = true }
local function statement(n)
  local s = n
  while s:parent() and EXPR[s:parent().kind] do s = s:parent() end
  return s
end

local function in_static_assert(n)
  local p = n:parent()
  while p do
    if p.kind == "call" and p:field("callee") and p:field("callee"):text() == "static_assert" then return true end
    p = p:parent()
  end
  return false
end

local function enclosing_function(n)
  local p = n:parent()
  while p and p.kind ~= "function" do p = p:parent() end
  return p
end

local function is_device(fn)
  local ok, info = pcall(fn.info, fn)
  return ok and info and (info.global or info.device)
end

-- Local variables of kernels initialised from blockIdx: global indices.
local function global_indices(unit)
  local out = {}
  for d in unit:walk({ "declarator" }) do
    local v = d:field("value")
    local name = d:field("name")
    if v and name and v:text():find("blockIdx", 1, true) then out[name:text()] = true end
  end
  return out
end

-- The words of every wmma::fragment<...> / mma shape's template arguments.
local function fragment_words(text)
  local out = {}
  for head, args in text:gmatch("([%w_:]*)%s*(%b<>)") do
    local h = head:lower()
    if h:find("fragment", 1, true) or h:find("mma", 1, true) then
      for w in pairs(layout.words(args)) do out[w] = true end
    end
  end
  return out
end

-- The block configuration of each host launch `k<<<grid, block, ...>>>`.
local function host_blocks(unit)
  local out = {}
  for l in unit:walk({ "launch" }) do
    local config = l:text():match("<<<(.-)>>>")
    if config then
      local parts, depth, cur = {}, 0, {}
      for c in config:gmatch(".") do
        if c == "(" then depth = depth + 1 elseif c == ")" then depth = depth - 1 end
        if c == "," and depth == 0 then parts[#parts + 1] = table.concat(cur); cur = {} else cur[#cur + 1] = c end
      end
      parts[#parts + 1] = table.concat(cur)
      if parts[2] then out[#out + 1] = { text = parts[2]:gsub("^%s+", ""):gsub("%s+$", ""), line = l.line } end
    end
  end
  return out
end

local function literal_shape(text)
  return text:match("^[%d%s,]+$") or text:match("^dim3%s*%(([%d%s,]*)%)$")
end

local function launches(ann)
  local list = { ann.launch }
  for _, l in pairs(ann.launches or {}) do list[#list + 1] = l end
  return list
end

function M.reaches(unit, ann, reach, name)
  local r = reach(name)
  for _, launch in ipairs(launches(ann)) do
    for _, list in ipairs({ launch.grid, launch.block, { launch.smem } }) do
      for _, c in ipairs(list) do for _, n in ipairs(c.names) do if r[n] then return "the launch" end end end
    end
  end
  local decls = unit:declarations()
  for stmt in unit:walk({ "decl_stmt" }) do decls[#decls + 1] = stmt:declaration() end
  for _, dc in ipairs(decls) do
    for _, dd in ipairs(dc.shared and dc.declarators or {}) do
      for _, dim in ipairs(dd.dims) do
        for w in pairs(layout.words(dim.text)) do if r[w] then return "a shared array's extent" end end
      end
    end
  end
  -- the kernel's own arithmetic with the threads or the launch's names
  -- (BLOCK * VEC: how much of a row a block holds)
  local geometry = {}
  for _, w in ipairs(THREAD) do geometry[w] = true end
  for _, launch in ipairs(launches(ann)) do
    for _, list in ipairs({ launch.grid, launch.block }) do
      for _, c in ipairs(list) do for _, n in ipairs(c.names) do geometry[n] = true end end
    end
  end
  for id in unit:walk({ "ident" }) do
    if r[id:text()] then
      local fn = enclosing_function(id)
      if fn and is_device(fn) then
        for w in pairs(layout.words(statement(id):text())) do
          if geometry[w] and not r[w] then return string.format("the launch geometry through the kernel's arithmetic (line %d)", id.line) end
        end
      end
    end
  end
  return nil
end

function M.why_not(unit, ann, reach, d)
  local name, value = d.name.text, d.value.int
  local r = reach(name)
  local text = tostring(unit)
  local up = name:upper()
  for _, h in ipairs(HARDWARE_NAME) do
    if up:find(h) then
      return string.format("%s names a hardware constant (the warp size or a lane count): it is not the kernel's to choose", name)
    end
  end
  local frag = fragment_words(text)
  for n in pairs(r) do
    if frag[n] then return string.format("%s shapes a wmma fragment or mma tile, which only the library's shapes allow", n) end
  end
  local globals = global_indices(unit)
  for id in unit:walk({ "ident" }) do
    local n = id:text()
    if r[n] then
      local p, me = unwrap_up(id)
      local fn = enclosing_function(id)
      -- an argument of a warp intrinsic: a width or a lane offset
      local a = id:parent()
      while a and a.kind ~= "call" and a.kind ~= "function" do a = a:parent() end
      local callee = a and a.kind == "call" and a:field("callee") and a:field("callee"):text() or ""
      for _, pat in ipairs(INTRINSIC) do
        if callee:match(pat) then
          return string.format("line %d passes %s to %s: a warp's width is a hardware constant", id.line, n, callee)
        end
      end
      if p and p.kind == "binary" and (p.op == "/" or p.op == "%") and p:field("rhs") and p:field("rhs").id == me.id
          and n == name and value == 32 and mentions(p:field("lhs"):text(), { "threadIdx", "lane", "tid" }) then
        return string.format("line %d divides a thread index by %s = 32, the warp size, which must stay 32", id.line, n)
      end
      -- a static_assert's bound (BLOCK >= 32) is a constraint layout.consistent
      -- checks at each value, not a use
      if p and p.kind == "binary" and COMPARE[p.op] and not in_static_assert(id) then
        local other = p:field("lhs") and p:field("lhs").id == me.id and p:field("rhs") or p:field("lhs")
        local ot = other and other:text() or ""
        if ot:match("^%s*32%s*$") or ot:find("warpSize", 1, true) then
          return string.format("line %d compares %s with %s, a hardware constant", id.line, n, ot)
        end
        if ot:find("blockIdx", 1, true) or globals[ot:match("^%s*([%a_][%w_]*)%s*$") or ""] then
          return string.format("line %d compares the global index %s with %s: it is a problem size", id.line, ot, n)
        end
      end
      if fn and not is_device(fn) then
        local inside_launch = false
        local q = id:parent()
        while q and q ~= fn do
          if q.kind == "launch" then inside_launch = true end
          if q.kind == "decl_stmt" and q:text():match("^%s*dim3") then inside_launch = true end
          q = q:parent()
        end
        if not inside_launch then
          return string.format("the host function %s uses %s at line %d: it may be a problem size", fn:name() or "?", n, id.line)
        end
      end
    end
  end
  local defined = {}
  for _, dd in ipairs(unit:defines()) do defined[dd.name.text] = true end
  for _, launch in ipairs(launches(ann)) do
    for _, c in ipairs(launch.grid) do
      for first in c.text:gmatch("cdiv%s*(%b())") do
        -- a dividend of defines alone (cdiv(N, 16)) is a count of elements;
        -- one with workload parameters (cdiv(frontier * ALPHA, B)) is not
        local dividend = first:sub(2):match("^([^,]*),")
        local only_defines = dividend ~= nil
        for w in pairs(dividend and layout.words(dividend) or {}) do
          if not defined[w] and w ~= "min" and w ~= "max" and w ~= "cdiv" then only_defines = false end
        end
        if dividend and only_defines and layout.words(dividend)[name] then
          return string.format("the launch's grid divides %s up (%s): it is a problem size", name, c.text)
        end
      end
    end
  end
  -- the block shape written as literals while the kernel indexes threads with it
  local literal
  for _, launch in ipairs(launches(ann)) do
    local names = 0
    for _, c in ipairs(launch.block) do names = names + #c.names end
    if names == 0 then
      local parts = {}
      for i, c in ipairs(launch.block) do parts[i] = c.text end
      literal = "the @kl launch line's block(" .. table.concat(parts, ", ") .. ")"
    end
  end
  for _, b in ipairs(host_blocks(unit)) do
    if literal_shape(b.text) then literal = literal or string.format("the host launch at line %d (block %s)", b.line, b.text) end
  end
  if literal then
    for id in unit:walk({ "ident" }) do
      if r[id:text()] then
        local fn = enclosing_function(id)
        if fn and is_device(fn) and mentions(statement(id):text(), THREAD) then
          return string.format("%s writes the block shape as literals while line %d indexes threads with %s", literal,
            id.line, id:text())
        end
      end
    end
  end
  return nil
end

return M
