-- Command-line parsing for subcommands: a spec of flags in, a table out.
-- A usage error raises a table { usage = message } that cli/init.lua turns into
-- a one-line error and exit code 2.
local M = {}

local function usage_error(fmt, ...)
  error({ usage = string.format(fmt, ...) }, 0)
end
M.usage_error = usage_error

-- Whether a word on the command line is an option rather than a value.
-- A negative number ("-1") is a value.
local function looks_like_option(word)
  return word:match("^%-%-[%w%-_]") ~= nil or (word:match("^%-%a$") ~= nil)
end

-- spec = { flags = { json = "boolean", arch = "string", n = "number", option = "list" },
--          aliases = { j = "json" }, min = 1, max = 1 }
-- Returns { flags..., positional = { ... } }. A "list" flag may be given
-- many times and comes back as a list of strings.
-- A value is the next word ("--arch sm_90") or follows "=" ("--arch=sm_90").
-- The next word is never taken as a value when it is itself an option:
-- "--arch --json" is "--arch needs a value", not an arch named "--json";
-- a value that starts with "--" is written "--name=--value".
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
          local nxt = argv[i + 1]
          if nxt == nil then usage_error("option '%s' needs a value", a) end
          if looks_like_option(nxt) then
            usage_error("option '%s' needs a value, got the option '%s' (write %s=VALUE for a value that starts with '-')",
              a, nxt, a)
          end
          i = i + 1
          value = nxt
        end
        if kind == "number" then
          local n = tonumber(value)
          if not n then usage_error("option '%s' needs a number, got '%s'", a, value) end
          value = n
        end
        if kind == "list" then
          out[name] = out[name] or {}
          table.insert(out[name], value)
        else
          out[name] = value
        end
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
