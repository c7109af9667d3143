-- The string and table libraries as sandboxed code gets them
-- (klineage.workload.spec_sandbox): the standard functions, except where a C
-- function's time is not bounded by the size of what it is given. The
-- sandbox checks its limits between Lua instructions only, so such a
-- function could keep the engine waiting as long as it liked:
--   * string.rep of an empty string with an empty separator copies nothing
--     n times (n up to 2^63): it returns "" at once.
--   * find, match, gmatch and gsub backtrack: a pattern whose worst case
--     exceeds PATTERN_WORK steps is refused. gsub through a replacement
--     table with a metatable looks each match up from Lua, where it is
--     counted.
--   * table.insert, remove, concat, unpack, sort and move walk the length
--     __len claims, through whatever __index and __newindex are (a chain
--     of 2000 tables, a C function): on a table with a metatable they run
--     here, in Lua, one counted step at a time. On a plain table the C
--     function runs, bounded by what the table holds; table.move's range
--     is at most MOVE_MAX elements.
-- The sandbox raises its limits in any code but its own file, this one
-- included, so a loop here ends at the limits too. What stays in C beyond
-- these is bounded by the memory limit, and the watchdog (kl.watchdog)
-- ends whatever is left.
--
--   lib.string() -> a copy of the string library, guarded, without dump
--   lib.table()  -> a copy of the table library, guarded
--   lib.PATTERN_WORK, lib.MOVE_MAX
local M = {}

M.PATTERN_WORK = 1e9         -- worst-case steps of one pattern function call
M.MOVE_MAX = 1 << 26         -- elements of one table.move in C
M.UNPACK_MAX = 1000000       -- values of one table.unpack (Lua's stack limit)

local raw_metatable = debug.getmetatable
local s_byte, s_find, s_match, s_gmatch, s_gsub, s_rep =
  string.byte, string.find, string.match, string.gmatch, string.gsub, string.rep
local t_insert, t_remove, t_concat, t_unpack, t_sort, t_move =
  table.insert, table.remove, table.concat, table.unpack, table.sort, table.move
local tointeger, maxinteger = math.tointeger, math.maxinteger

---------------------------------------------------------------- strings

-- Repetitions in a Lua pattern: each quantifier, %b and back reference may
-- multiply the steps of a match by the subject's length. Over-counting is
-- safe: '-' or '*' inside a set is skipped, an escaped one too.
local function repetitions(p)
  local q, i, n = 0, 1, #p
  while i <= n do
    local c = s_byte(p, i)
    if c == 37 then -- %
      local d = s_byte(p, i + 1)
      if d == 98 then q, i = q + 1, i + 4                     -- %bxy
      elseif d and d >= 48 and d <= 57 then q, i = q + 1, i + 2 -- %1 .. %9
      else i = i + 2 end
    elseif c == 91 then -- [set]
      i = i + 1
      if s_byte(p, i) == 94 then i = i + 1 end
      if s_byte(p, i) == 93 then i = i + 1 end
      while i <= n and s_byte(p, i) ~= 93 do
        if s_byte(p, i) == 37 then i = i + 1 end
        i = i + 1
      end
      i = i + 1
    else
      if c == 42 or c == 43 or c == 45 or c == 63 then q = q + 1 end -- * + - ?
      i = i + 1
    end
  end
  return q
end

local function check_pattern(name, s, p, plain)
  if type(s) ~= "string" and type(s) ~= "number" then return end -- the real function says what is wrong
  if type(p) ~= "string" and type(p) ~= "number" then return end
  s, p = tostring(s), tostring(p)
  local q = plain and 0 or repetitions(p)
  local work = (#s + 1.0) ^ (q + 1) * (#p + 1)
  if work > M.PATTERN_WORK then
    error(string.format("string.%s: a pattern with %d repetitions over %d characters may take %.3g steps (a spec may take %.0e)",
      name, q, #s, work, M.PATTERN_WORK), 3)
  end
end

function M.string()
  local s = {}
  for k, v in pairs(string) do s[k] = v end
  s.dump = nil
  s.find = function(str, p, init, plain) check_pattern("find", str, p, plain) return s_find(str, p, init, plain) end
  s.match = function(str, p, init) check_pattern("match", str, p) return s_match(str, p, init) end
  s.gmatch = function(str, p, init) check_pattern("gmatch", str, p) return s_gmatch(str, p, init) end
  s.gsub = function(str, p, repl, n)
    check_pattern("gsub", str, p)
    if type(repl) == "table" and raw_metatable(repl) ~= nil then
      local t = repl
      -- a function gets the first capture too, and its result is read alike
      repl = function(key) return t[key] end
    end
    return s_gsub(str, p, repl, n)
  end
  s.rep = function(str, n, sep)
    -- the C loop runs n times even when each copy is empty
    if str == "" and (sep == nil or sep == "") and tointeger(n) then return "" end
    return s_rep(str, n, sep)
  end
  return s
end

---------------------------------------------------------------- tables

local function arg_error(i, fname, why)
  error(string.format("bad argument #%d to '%s' (%s)", i, fname, why), 3)
end

local function int_arg(x, i, fname)
  local v = tointeger(type(x) == "string" and tonumber(x) or x)
  if v == nil then
    arg_error(i, fname, type(x) == "number" and "number has no integer representation" or ("number expected, got " .. type(x)))
  end
  return v
end

-- #t as the C functions take it: __len may answer, but with an integer.
local function len(t)
  local n = tointeger(#t)
  if n == nil then error("object length is not an integer", 3) end
  return n
end

-- A table whose metatable may run code (or hand the C loop a length it
-- never reaches): these go through the Lua versions below.
local function dressed(t)
  return type(t) == "table" and raw_metatable(t) ~= nil
end

local function insert(list, ...)
  local n = select("#", ...)
  local e = len(list) + 1
  if n == 1 then
    list[e] = ...
    return
  end
  if n ~= 2 then error("wrong number of arguments to 'insert'", 2) end
  local pos, v = ...
  pos = int_arg(pos, 2, "insert")
  -- as the C function checks it: 1 <= pos <= e, unsigned (e may wrap)
  if not math.ult(pos - 1, e) then arg_error(2, "insert", "position out of bounds") end
  for i = e, pos + 1, -1 do list[i] = list[i - 1] end
  list[pos] = v
end

local function remove(list, pos)
  local size = len(list)
  if pos == nil then pos = size else pos = int_arg(pos, 2, "remove") end
  if pos ~= size and math.ult(size, pos - 1) then arg_error(2, "remove", "position out of bounds") end
  local v = list[pos]
  for i = pos, size - 1 do list[i] = list[i + 1] end
  list[pos < size and size or pos] = nil
  return v
end

local function concat(list, sep, i, j)
  if sep == nil then sep = "" end
  if type(sep) ~= "string" and type(sep) ~= "number" then arg_error(2, "concat", "string expected, got " .. type(sep)) end
  i = i == nil and 1 or int_arg(i, 3, "concat")
  j = j == nil and len(list) or int_arg(j, 4, "concat")
  local parts = {}
  for k = i, j do
    local v = list[k]
    if type(v) ~= "string" and type(v) ~= "number" then
      error(string.format("invalid value (at index %d) in table for 'concat'", k), 2)
    end
    parts[#parts + 1] = v
  end
  return t_concat(parts, sep)
end

local function unpack(list, i, j)
  i = i == nil and 1 or int_arg(i, 2, "unpack")
  j = j == nil and len(list) or int_arg(j, 3, "unpack")
  if i > j then return end
  if j - i < 0 or j - i >= M.UNPACK_MAX then error("too many results to unpack", 2) end
  local out = {}
  for k = i, j do out[k - i + 1] = list[k] end
  return t_unpack(out, 1, j - i + 1)
end

local function sort(list, comp)
  local n = len(list)
  if n <= 1 then return end
  if n >= 0x7fffffff then arg_error(1, "sort", "array too big") end
  if comp ~= nil and type(comp) ~= "function" then arg_error(2, "sort", "function expected, got " .. type(comp)) end
  local copy = {}
  for k = 1, n do copy[k] = list[k] end
  t_sort(copy, comp)
  for k = 1, n do list[k] = copy[k] end
end

local function move(a1, f, e, to, a2)
  f, e, to = int_arg(f, 2, "move"), int_arg(e, 3, "move"), int_arg(to, 4, "move")
  if a2 == nil then a2 = a1 end
  if e >= f then
    if not (f > 0 or e < maxinteger + f) then arg_error(3, "move", "too many elements to move") end
    local n = e - f
    if to > maxinteger - n then arg_error(4, "move", "destination wrap around") end
    if to > e or to <= f or a1 ~= a2 then
      for k = 0, n do a2[to + k] = a1[f + k] end
    else
      for k = n, 0, -1 do a2[to + k] = a1[f + k] end
    end
  end
  return a2
end

function M.table()
  local t = {}
  for k, v in pairs(table) do t[k] = v end
  t.insert = function(list, ...) if dressed(list) then return insert(list, ...) end return t_insert(list, ...) end
  t.remove = function(list, ...) if dressed(list) then return remove(list, ...) end return t_remove(list, ...) end
  t.concat = function(list, ...) if dressed(list) then return concat(list, ...) end return t_concat(list, ...) end
  t.unpack = function(list, ...) if dressed(list) then return unpack(list, ...) end return t_unpack(list, ...) end
  t.sort = function(list, ...) if dressed(list) then return sort(list, ...) end return t_sort(list, ...) end
  t.move = function(a1, f, e, to, a2)
    if dressed(a1) or dressed(a2) then return move(a1, f, e, to, a2) end
    local fi, ei = tointeger(f), tointeger(e)
    if fi and ei and ei >= fi and (ei - fi >= M.MOVE_MAX or ei - fi < 0) then
      error(string.format("table.move: %d .. %d is more than %d elements", fi, ei, M.MOVE_MAX), 2)
    end
    return t_move(a1, f, e, to, a2)
  end
  return t
end

return M
