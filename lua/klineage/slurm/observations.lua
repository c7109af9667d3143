-- The observations an eval learns from (--learn-from), extracted once when
-- it is submitted and read back by every unit: extracting them from the
-- walk and probe journals costs each process tens of seconds (25 s of CPU
-- for the 28 H200 walk folders), far more than a typical unit.
--
-- The file is a Lua table constructor, not JSON: JSON has one kind of
-- number, and the learner's output depends on whether a value is an
-- integer or a float (the skill serializer writes 0 and 0.0 apart), so a
-- JSON round trip would learn different records. string.format("%q")
-- writes every number exactly (a float as a hex float), every string
-- byte for byte. It is read as data: text only, an empty environment,
-- within the spec sandbox's limits (M.LIMITS: a file that loops, in Lua or
-- in a C function, ends instead of holding every unit of the eval).
--
--   observations.write(path, list) -> true | nil, failure (io_error)
--   observations.read(path) -> list | nil, failure (bad_input)
local files = require "klineage.base.files"
local sandbox = require "klineage.workload.spec_sandbox"
local verdicts = require "klineage.base.verdicts"

local M = {}

-- Generous: the file is the eval's own, up to a GiB of table constructors.
M.LIMITS = { instructions = 1 << 50, memory = 1 << 36, seconds = 600 }

local function emit(v, out)
  local t = type(v)
  if t == "table" then
    local keys, n = {}, 0
    for k in pairs(v) do
      n = n + 1
      keys[n] = k
    end
    out[#out + 1] = "{"
    if n == #v then
      for i = 1, n do
        emit(v[i], out)
        out[#out + 1] = ","
      end
    else
      table.sort(keys, function(a, b)
        if type(a) ~= type(b) then return type(a) < type(b) end
        return a < b
      end)
      for _, k in ipairs(keys) do
        out[#out + 1] = "["
        emit(k, out)
        out[#out + 1] = "]="
        emit(v[k], out)
        out[#out + 1] = ","
      end
    end
    out[#out + 1] = "}\n"
  elseif t == "number" then
    if v ~= v then out[#out + 1] = "(0/0)" else out[#out + 1] = string.format("%q", v) end
  elseif t == "string" then
    out[#out + 1] = string.format("%q", v)
  elseif t == "boolean" then
    out[#out + 1] = tostring(v)
  else
    error("observations.write: a " .. t .. " cannot be written", 3)
  end
end

function M.write(path, list)
  if type(list) ~= "table" then error("observations.write: a list expected", 2) end
  local out = { "return " }
  emit(list, out)
  return files.write_atomic(path, table.concat(out))
end

function M.read(path)
  local text, f = files.read_file(path, 1 << 30)
  if not text then return nil, f end
  local sb = sandbox.new("the observations file " .. files.display(path))
  local loaded, chunk, err = sb:call(M.LIMITS, load, text, "=" .. path, "t", {})
  if not loaded then err = chunk end
  if not chunk then return nil, verdicts.failure("bad_input", string.format("%s: %s", files.display(path), err)) end
  local ok, list, why = sb:call(M.LIMITS, chunk)
  if not ok and why ~= "error" then
    return nil, verdicts.failure("bad_input", string.format("%s: %s", files.display(path), list))
  end
  -- an empty environment has no setmetatable: what comes back is plain
  if not ok then list = nil end
  if type(list) ~= "table" then
    return nil, verdicts.failure("bad_input", string.format("%s does not hold a list of observations", files.display(path)))
  end
  return list
end

return M
