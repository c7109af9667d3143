-- The deterministic writer of skill records: a Lua literal whose diff
-- reads as a review, and the same text for the same table every time.
--
--   serialize.record(t) -> text | nil, failure (bad_input)
--   serialize.value(v) -> text | nil, failure: one value, no header
--   serialize.HEADER: the comment line every record file starts with
--   serialize.float_text(x) -> text: a finite float as written here
--
-- The text is HEADER, then `return { ... }`:
--   * a table is its list part 1..n in order, then its string keys in byte
--     order, one entry a line, indented two spaces a level; a list of
--     scalars that fits stays on the opening line ({ "size.N", "==", 8,
--     then the string keys below it: a condition reads as one); a list of
--     integers alone that does not fit is wrapped, as many a line as fit
--     (a record's observation indices);
--   * a string key that is an identifier (not a keyword) is written bare,
--     any other in ["..."];
--   * strings are always double-quoted with escapes: \\ \" \n \r \t, other
--     control bytes and bytes of invalid UTF-8 as \ddd (three digits, so a
--     digit after one is never taken into it); valid UTF-8 stays as it is.
--     No long brackets, so "]]" in a string is nothing special;
--   * an integer is written as one (math.mininteger in hex, the only
--     way a literal gives it back), a float in the shortest %.Ng that reads
--     back the same, with ".0" added where that looks like an integer, so
--     3 and 3.0 stay apart.
-- Refused, with the path of the value: functions, userdata, threads, NaN
-- and infinities, cycles, keys other than strings and the list's 1..n (a
-- sparse list, a float or boolean key).
-- load(serialize(t), ..., "t", {}) gives a table deep-equal to t, and
-- serializing that gives the same text.
local verdicts = require "klineage.base.verdicts"

local M = {}

M.HEADER = "-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand"

local INLINE_WIDTH = 100

local KEYWORDS = {}
for w in ([[and break do else elseif end false for function goto if in local nil not or repeat return then true
  until while]]):gmatch("%a+") do KEYWORDS[w] = true end

local Refused = {}
local function refuse(path, fmt, ...)
  error(setmetatable({ message = "serialize: " .. (path == "" and "the value" or path) .. ": " .. string.format(fmt, ...) }, Refused), 0)
end

local ESC = { ["\\"] = "\\\\", ['"'] = '\\"', ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }

-- The length of the valid UTF-8 sequence at i (2..4), or nil.
local function utf8_run(s, i)
  local b = s:byte(i)
  local n = (b >= 0xC2 and b <= 0xDF and 2) or (b >= 0xE0 and b <= 0xEF and 3) or (b >= 0xF0 and b <= 0xF4 and 4)
  if not n or i + n - 1 > #s then return nil end
  for j = i + 1, i + n - 1 do
    local c = s:byte(j)
    if c < 0x80 or c > 0xBF then return nil end
  end
  -- utf8.len refuses overlong forms and surrogates (Lua 5.4's strict decode)
  if utf8.len(s:sub(i, i + n - 1)) ~= 1 then return nil end
  return n
end

local function quote(s)
  local out, i, n = { '"' }, 1, #s
  while i <= n do
    local b = s:byte(i)
    local c = s:sub(i, i)
    if ESC[c] then
      out[#out + 1] = ESC[c]
      i = i + 1
    elseif b < 0x20 or b == 0x7F then
      out[#out + 1] = string.format("\\%03d", b)
      i = i + 1
    elseif b < 0x80 then
      local j = i
      while j + 1 <= n do
        local d = s:byte(j + 1)
        if d < 0x20 or d >= 0x7F or d == 0x22 or d == 0x5C then break end
        j = j + 1
      end
      out[#out + 1] = s:sub(i, j)
      i = j + 1
    else
      local len = utf8_run(s, i)
      if len then
        out[#out + 1] = s:sub(i, i + len - 1)
        i = i + len
      else
        out[#out + 1] = string.format("\\%03d", b)
        i = i + 1
      end
    end
  end
  out[#out + 1] = '"'
  return table.concat(out)
end

-- A finite float as the shortest %.Ng that reads back the same, ".0"
-- added where it would read as an integer (the observations file writes
-- its floats with it too: valid JSON, and 64.0 stays apart from 64).
function M.float_text(v)
  local text
  for digits = 1, 17 do
    text = string.format("%." .. digits .. "g", v)
    if tonumber(text) == v then break end
  end
  if not text:find("[%.eEn]") then text = text .. ".0" end
  return text
end

local function number(path, v)
  if math.type(v) == "integer" then
    if v == math.mininteger then return "0x8000000000000000" end
    return string.format("%d", v)
  end
  if v ~= v then refuse(path, "NaN is not a value a record can hold") end
  if v == math.huge or v == -math.huge then refuse(path, "an infinity is not a value a record can hold") end
  return M.float_text(v)
end

local function scalar(path, v)
  local t = type(v)
  if t == "string" then return quote(v) end
  if t == "number" then return number(path, v) end
  if t == "boolean" then return tostring(v) end
  return nil
end

local function key_path(path, k)
  if type(k) == "string" then
    if k:match("^[%a_][%w_]*$") then return path == "" and k or (path .. "." .. k) end
    return path .. "[" .. quote(k) .. "]"
  end
  return path .. "[" .. tostring(k) .. "]"
end

local function key_text(k)
  if k:match("^[%a_][%w_]*$") and not KEYWORDS[k] then return k end
  return "[" .. quote(k) .. "]"
end

-- The list length and sorted string keys of t, or a refusal.
local function shape(path, t)
  local n = rawlen(t)
  local keys = {}
  for k in next, t do
    if type(k) == "string" then
      keys[#keys + 1] = k
    elseif math.type(k) == "integer" and k >= 1 and k <= n then
      -- the list part
    elseif math.type(k) == "integer" then
      refuse(key_path(path, k), "a list must run 1..n with no holes (this table's runs 1..%d)", n)
    else
      refuse(path, "a key must be a string or a list index, got a %s key (%s)", math.type(k) or type(k), tostring(k))
    end
  end
  for i = 1, n do
    if rawget(t, i) == nil then refuse(key_path(path, i), "a list must run 1..n with no holes") end
  end
  table.sort(keys)
  return n, keys
end

local function all_integers(v, n)
  for i = 1, n do
    if math.type(v[i]) ~= "integer" or v[i] == math.mininteger then return false end
  end
  return true
end

local function write(path, v, indent, out, open)
  local s = scalar(path, v)
  if s then return s end
  if type(v) ~= "table" then refuse(path, "a %s cannot be written as data", type(v)) end
  if open[v] then refuse(path, "a cycle: the table contains itself") end
  if getmetatable(v) ~= nil then refuse(path, "a table with a metatable is not plain data") end
  open[v] = true
  local n, keys = shape(path, v)
  if n == 0 and #keys == 0 then
    open[v] = nil
    return "{}"
  end
  local pad = indent .. "  "
  -- a list of scalars that fits goes on the opening line
  local head
  local all_scalar = n > 0
  for i = 1, n do
    if type(v[i]) == "table" then all_scalar = false break end
  end
  if all_scalar then
    local items = {}
    for i = 1, n do items[i] = write(key_path(path, i), v[i], pad, out, open) end
    local line = "{ " .. table.concat(items, ", ")
    if #indent + #line <= INLINE_WIDTH then head = line end
  end
  local lines = {}
  if all_scalar and not head and #keys == 0 and all_integers(v, n) then
    -- the observation indices a record cites: wrapped, not one a line
    lines[1] = "{"
    local line = pad
    for i = 1, n do
      local item = string.format("%d", v[i]) .. ","
      if line ~= pad and #line + 1 + #item > INLINE_WIDTH then
        lines[#lines + 1] = line
        line = pad
      end
      line = line == pad and (pad .. item) or (line .. " " .. item)
    end
    lines[#lines + 1] = line
    lines[#lines + 1] = indent .. "}"
    open[v] = nil
    return table.concat(lines, "\n")
  end
  if head then
    if #keys == 0 then
      open[v] = nil
      return head .. " }"
    end
    lines[1] = head .. ","
  else
    lines[1] = "{"
    for i = 1, n do lines[#lines + 1] = pad .. write(key_path(path, i), v[i], pad, out, open) .. "," end
  end
  for _, k in ipairs(keys) do
    lines[#lines + 1] = pad .. key_text(k) .. " = " .. write(key_path(path, k), v[k], pad, out, open) .. ","
  end
  lines[#lines + 1] = indent .. "}"
  open[v] = nil
  return table.concat(lines, "\n")
end

function M.value(v)
  local ok, text = pcall(write, "", v, "", nil, {})
  if ok then return text end
  if getmetatable(text) == Refused then return nil, verdicts.failure("bad_input", text.message) end
  error(text, 0)
end

function M.record(t)
  if type(t) ~= "table" then error("serialize.record: a table expected, got " .. type(t), 2) end
  local text, f = M.value(t)
  if not text then return nil, f end
  return M.HEADER .. "\nreturn " .. text .. "\n"
end

return M
