-- The observations of a skill record, beside it as <id>.observations.jsonl
-- (klineage.skills.layout): one observation a line, the line number its
-- index, so that a condition citing observation 12 is read at line 12.
--
--   observations_file.encode(list) -> text | nil, failure (bad_input: a
--       value JSON cannot hold exactly, named by its path)
--   observations_file.decode(text) -> list | nil, message ("line L,
--       column C: ...")
--
-- The text is each observation as one JSON object and "\n":
--   * object keys sorted bytewise (Lua 5.4 seeds table order per process);
--     a table whose keys are exactly 1..n (n >= 1) is an array, an empty
--     table {}; any other mix of keys is refused;
--   * an integer is written "%d"; a float as klineage.skills.serialize
--     writes it (the shortest text that reads back, with ".0" where it
--     would look like an integer). The learner tells 64 from 64.0 (a
--     midpoint threshold stays an integer only between integers), and
--     JSON has one kind of number: here a number with a fraction or an
--     exponent is a float, any other an integer, both ways. lua-cjson
--     reads every number as a float, so the reader is this module's own;
--   * strings are UTF-8 (other bytes are refused: JSON has no byte
--     escape), with \" \\ \n \r \t and \u00XX for the other controls.
-- The reader takes the JSON this writes and any JSON of the same values
-- (spaces, other escapes, keys in any order), except null (no observation
-- holds one), duplicate keys, integers past 64 bits, and nesting past
-- MAX_DEPTH: none of them could come back as the table that was written.
local serialize = require "klineage.skills.serialize"
local verdicts = require "klineage.base.verdicts"

local M = {}

M.MAX_DEPTH = 32

-- ---- writing --------------------------------------------------------------------------

local Refused = {}
local function refuse(path, fmt, ...)
  error(setmetatable({ message = path .. ": " .. string.format(fmt, ...) }, Refused), 0)
end

local ESC = { ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }

local function string_text(path, s)
  if not utf8.len(s) then refuse(path, "a string that is not UTF-8 (JSON cannot hold its bytes)") end
  return '"' .. s:gsub('[\0-\31"\\\127]', function(c) return ESC[c] or string.format("\\u%04x", c:byte()) end) .. '"'
end

local function child(path, k)
  if math.type(k) == "integer" then return path .. "[" .. k .. "]" end
  if k:match("^[%a_][%w_]*$") then return path .. "." .. k end
  return path .. "[" .. string.format("%q", k) .. "]"
end

local function write(path, v, out, depth)
  local t = type(v)
  if t == "string" then
    out[#out + 1] = string_text(path, v)
  elseif math.type(v) == "integer" then
    out[#out + 1] = string.format("%d", v)
  elseif t == "number" then
    if v ~= v or v == math.huge or v == -math.huge then refuse(path, "%s is not a value JSON can hold", tostring(v)) end
    out[#out + 1] = serialize.float_text(v)
  elseif t == "boolean" then
    out[#out + 1] = tostring(v)
  elseif t == "table" then
    if depth >= M.MAX_DEPTH then refuse(path, "nested deeper than %d", M.MAX_DEPTH) end
    local n, keys, others = rawlen(v), {}, 0
    for k in next, v do
      if type(k) == "string" then keys[#keys + 1] = k
      elseif not (math.type(k) == "integer" and k >= 1 and k <= n) then others = others + 1 end
    end
    if others > 0 or (n > 0 and #keys > 0) then
      refuse(path, "a table must be a list 1..n or have only string keys")
    end
    if n > 0 then
      out[#out + 1] = "["
      for i = 1, n do
        if i > 1 then out[#out + 1] = "," end
        write(child(path, i), v[i], out, depth + 1)
      end
      out[#out + 1] = "]"
    else
      table.sort(keys)
      out[#out + 1] = "{"
      for i, k in ipairs(keys) do
        if i > 1 then out[#out + 1] = "," end
        out[#out + 1] = string_text(child(path, k), k)
        out[#out + 1] = ":"
        write(child(path, k), v[k], out, depth + 1)
      end
      out[#out + 1] = "}"
    end
  else
    refuse(path, "a %s cannot be written as data", t)
  end
end

function M.encode(list)
  if type(list) ~= "table" then error("observations_file.encode: a list expected", 2) end
  local out = {}
  local ok, err = pcall(function()
    for i, o in ipairs(list) do
      local path = "observation " .. i
      if type(o) ~= "table" or rawlen(o) > 0 then
        refuse(path, "an observation is a table of named fields, got a %s", type(o) == "table" and "list" or type(o))
      end
      write(path, o, out, 0)
      out[#out + 1] = "\n"
    end
  end)
  if ok then return table.concat(out) end
  if getmetatable(err) == Refused then return nil, verdicts.failure("bad_input", "observations: " .. err.message) end
  error(err, 0)
end

-- ---- reading ---------------------------------------------------------------------------

local Bad = {}
local function bad(at, fmt, ...) error(setmetatable({ at = at, message = string.format(fmt, ...) }, Bad), 0) end

local SIMPLE = { ['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f", n = "\n", r = "\r", t = "\t" }

local function skip_space(s, i) return s:find("[^ \t]", i) or #s + 1 end

local function read_string(s, i)
  local parts, j = {}, i + 1
  while true do
    local k = s:find('[\0-\31"\\]', j)
    if not k then bad(i, "a string that does not end") end
    parts[#parts + 1] = s:sub(j, k - 1)
    local c = s:sub(k, k)
    if c == '"' then
      local text = table.concat(parts)
      if not utf8.len(text) then bad(i, "a string that is not UTF-8") end
      return text, k + 1
    elseif c == "\\" then
      local e = s:sub(k + 1, k + 1)
      if SIMPLE[e] then
        parts[#parts + 1] = SIMPLE[e]
        j = k + 2
      elseif e == "u" then
        local hex = s:match("^%x%x%x%x", k + 2)
        if not hex then bad(k, "\\u needs four hex digits") end
        local code = tonumber(hex, 16)
        j = k + 6
        if code >= 0xD800 and code <= 0xDBFF then
          local low = s:match("^\\u(%x%x%x%x)", j)
          local lc = low and tonumber(low, 16)
          if not lc or lc < 0xDC00 or lc > 0xDFFF then bad(k, "a lone surrogate \\u%s", hex) end
          code = 0x10000 + ((code - 0xD800) << 10) + (lc - 0xDC00)
          j = j + 6
        elseif code >= 0xDC00 and code <= 0xDFFF then
          bad(k, "a lone surrogate \\u%s", hex)
        end
        parts[#parts + 1] = utf8.char(code)
      else
        bad(k, "an unknown escape \\%s", e)
      end
    else
      bad(k, "a raw control byte in a string")
    end
  end
end

local function read_number(s, i)
  local int, frac, exp = s:match("^(-?%d+)(%.?%d*)([eE]?[-+]?%d*)", i)
  if not int or not (int:match("^-?0$") or int:match("^-?[1-9]%d*$")) then bad(i, "a malformed number") end
  if (frac ~= "" and not frac:match("^%.%d+$")) or (exp ~= "" and not exp:match("^[eE][-+]?%d+$")) then
    bad(i, "a malformed number")
  end
  local j = i + #int + #frac + #exp
  if frac == "" and exp == "" then
    local v = math.tointeger(tonumber(int))
    if not v then bad(i, "an integer beyond 64 bits") end
    return v, j
  end
  local v = tonumber(int .. frac .. exp) -- a float: the text has a fraction or an exponent
  if v == math.huge or v == -math.huge then bad(i, "a number beyond a double") end
  return v, j
end

local read_value

local function read_object(s, i, depth)
  local t, seen = {}, {}
  i = skip_space(s, i + 1)
  if s:sub(i, i) == "}" then return t, i + 1 end
  while true do
    if s:sub(i, i) ~= '"' then bad(i, "an object key must be a string") end
    local k, at = nil, i
    k, i = read_string(s, i)
    if seen[k] then bad(at, "the key %q twice", k) end
    seen[k] = true
    i = skip_space(s, i)
    if s:sub(i, i) ~= ":" then bad(i, "':' expected after a key") end
    t[k], i = read_value(s, skip_space(s, i + 1), depth + 1)
    i = skip_space(s, i)
    local c = s:sub(i, i)
    if c == "}" then return t, i + 1 end
    if c ~= "," then bad(i, "',' or '}' expected") end
    i = skip_space(s, i + 1)
  end
end

local function read_array(s, i, depth)
  local t = {}
  i = skip_space(s, i + 1)
  if s:sub(i, i) == "]" then return t, i + 1 end
  while true do
    t[#t + 1], i = read_value(s, i, depth + 1)
    i = skip_space(s, i)
    local c = s:sub(i, i)
    if c == "]" then return t, i + 1 end
    if c ~= "," then bad(i, "',' or ']' expected") end
    i = skip_space(s, i + 1)
  end
end

function read_value(s, i, depth)
  if depth > M.MAX_DEPTH then bad(i, "nested deeper than %d", M.MAX_DEPTH) end
  local c = s:sub(i, i)
  if c == "{" then return read_object(s, i, depth) end
  if c == "[" then return read_array(s, i, depth) end
  if c == '"' then return read_string(s, i) end
  if c == "-" or c:match("%d") then return read_number(s, i) end
  if s:find("^true", i) then return true, i + 4 end
  if s:find("^false", i) then return false, i + 5 end
  if s:find("^null", i) then bad(i, "null: no observation holds one") end
  if c == "" then bad(i, "a value expected, the line ended") end
  bad(i, "a value expected, got '%s'", c)
end

function M.decode(text)
  if type(text) ~= "string" then error("observations_file.decode: a text expected", 2) end
  local list, line, start = {}, 0, 1
  if text ~= "" and text:sub(-1) ~= "\n" then
    local last = select(2, text:gsub("\n", "")) + 1
    return nil, string.format("line %d: the file does not end with a newline (cut short?)", last)
  end
  while start <= #text do
    line = line + 1
    local stop = text:find("\n", start, true)
    local s = text:sub(start, stop - 1)
    local ok, v, i = pcall(function()
      local i0 = skip_space(s, 1)
      if s:sub(i0, i0) ~= "{" then bad(i0, "an observation is a JSON object") end
      local value, after = read_value(s, i0, 1)
      after = skip_space(s, after)
      if after <= #s then bad(after, "more after the observation") end
      return value, after
    end)
    if not ok then
      if getmetatable(v) ~= Bad then error(v, 0) end
      return nil, string.format("line %d, column %d: %s", line, v.at, v.message)
    end
    list[line] = v
    start = stop + 1
  end
  return list
end

return M
