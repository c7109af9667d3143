-- The JSON every command prints: one input, one text. lua-cjson writes an
-- object's keys in table traversal order, which Lua 5.4 seeds per process,
-- so the same report came out in a different order on each run. Here
-- object keys are sorted (by their text, bytewise); scalars and strings
-- are still cjson's, except integers, written exactly ("%d": cjson's
-- "%.14g" turns 2^60 into 1.1529215046068e+18) and '/', left unescaped.
--
-- Arrays and objects as cjson tells them apart: a table whose keys are the
-- integers 1..n, or a few holes short of that (n <= 10 or at most half
-- holes; a hole is null), is an array; an empty table is {} (callers that
-- mean an empty list say so, as they did with cjson). NaN and the
-- infinities are null, and a value JSON has no form for (a function, a
-- table key that is neither string nor number, nesting past 1000) raises,
-- as cjson.encode does.
--
--   stable_json.encode(v) -> text
--
-- runs.canonical_json is the identity text of a judgement (it feeds a
-- hash: "%.17g" floats, [] for an empty table) and stays as it is; this
-- is the text people and scripts read.
local cjson = require "cjson"

local M = {}

local scalar = cjson.new()
scalar.encode_invalid_numbers("null")

local MAX_DEPTH = 1000

-- The array length of t, or nil when t is an object.
local function array_length(t)
  local count, max = 0, 0
  for k in pairs(t) do
    if math.type(k) ~= "integer" or k < 1 then return nil end
    count = count + 1
    if k > max then max = k end
  end
  if count == 0 then return nil end
  if max > 10 and max > 2 * count then return nil end
  return max
end

local function key_text(k)
  local t = type(k)
  if t == "string" then return k end
  if t == "number" then return math.type(k) == "integer" and string.format("%d", k) or scalar.encode(k) end
  error("stable_json: a table key must be a string or a number, not a " .. t, 0)
end

local function string_text(s) return (scalar.encode(s):gsub("\\/", "/")) end

local function write(v, out, depth)
  local t = type(v)
  if t == "table" then
    if depth > MAX_DEPTH then error("stable_json: nesting deeper than " .. MAX_DEPTH .. " (a cycle?)", 0) end
    local n = array_length(v)
    if n then
      out[#out + 1] = "["
      for i = 1, n do
        if i > 1 then out[#out + 1] = "," end
        if v[i] == nil then out[#out + 1] = "null" else write(v[i], out, depth + 1) end
      end
      out[#out + 1] = "]"
      return
    end
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = { text = key_text(k), key = k } end
    -- 1 and "1" are two keys with one text: the number first.
    table.sort(keys, function(a, b) return a.text < b.text or (a.text == b.text and type(a.key) < type(b.key)) end)
    out[#out + 1] = "{"
    for i, k in ipairs(keys) do
      if i > 1 then out[#out + 1] = "," end
      out[#out + 1] = string_text(k.text)
      out[#out + 1] = ":"
      write(v[k.key], out, depth + 1)
    end
    out[#out + 1] = "}"
  elseif t == "string" then
    out[#out + 1] = string_text(v)
  elseif math.type(v) == "integer" then
    out[#out + 1] = string.format("%d", v)
  else
    out[#out + 1] = scalar.encode(v)
  end
end

function M.encode(v)
  local out = {}
  write(v, out, 0)
  return table.concat(out)
end

return M
