-- Command-line parsing for subcommands: a spec of flags in, a table out.
-- A usage error raises a table { usage = message } that cli.lua turns into
-- a one-line error and exit code 2.
local M = {}

local function usage_error(fmt, ...)
  error({ usage = string.format(fmt, ...) }, 0)
end
M.usage_error = usage_error

-- spec = { flags = { json = "boolean", arch = "string", n = "number" },
--          aliases = { j = "json" }, min = 1, max = 1 }
-- Returns { flags..., positional = { ... } }.
function M.parse(argv, spec)
  local out = { positional = {} }
  local flags, aliases = spec.flags or {}, spec.aliases or {}
  local i = 1
  while i <= #argv do
    local a = argv[i]
    if a == "--" then
      table.move(argv, i + 1, #argv, #out.positional + 1, out.positional)
      break
    end
    local name, value = a:match("^%-%-([%w%-_]+)=(.*)$")
    if not name then name = a:match("^%-%-([%w%-_]+)$") or a:match("^%-(%a)$") end
    if name then
      name = aliases[name] or name:gsub("%-", "_")
      local kind = flags[name]
      if not kind then usage_error("unknown option '%s'", a) end
      if kind == "boolean" then
        if value then usage_error("option '--%s' takes no value", name) end
        out[name] = true
      else
        if not value then
          i = i + 1
          value = argv[i]
          if value == nil then usage_error("option '%s' needs a value", a) end
        end
        if kind == "number" then
          local n = tonumber(value)
          if not n then usage_error("option '%s' needs a number, got '%s'", a, value) end
          value = n
        end
        out[name] = value
      end
    else
      out.positional[#out.positional + 1] = a
    end
    i = i + 1
  end
  if spec.min and #out.positional < spec.min then usage_error("missing argument (see 'klineage help')") end
  if spec.max and #out.positional > spec.max then
    usage_error("unexpected argument '%s'", out.positional[spec.max + 1])
  end
  return out
end

return M
