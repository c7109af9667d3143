-- The expression language of workload specs and kernel annotations:
--   "M*K", "cdiv(N, BN)", "M % BM == 0 && N % BN == 0", "BM * BK * 4 * 2"
--
-- Values are Lua integers and floats (and booleans from comparisons).
-- Operators, loosest first, with C precedence:
--   ||   &&   |   ^   &   == !=   < <= > >=   << >>   + -   * / %   unary ! - + ~
-- Functions: cdiv(a, b) (integer division rounding up), min(a, b, ...),
-- max(a, b, ...). Integer literals may be hex (0x40) and carry C suffixes
-- (4u, 8L); float literals (1.0, 1e-5, 2.5f) make a float.
--
-- C and Lua disagree on integer division, so `/` between two integers is an
-- error that points at cdiv. `%` follows C (the sign of the dividend).
-- Identifiers are looked up in the tables given to eval, first hit wins.
--
--   local c, err = expr.compile("cdiv(N, BN)")   -- nil, message with a caret line
--   c:eval({ N = 100 }, { BN = 32 })              -- 4 ; or nil, message
--   c.names                                       -- { "N", "BN" } in order of appearance
--   expr.eval(text, env...)                       -- compile (cached) and evaluate
--
-- Errors read:  unknown name 'Q' at column 3
--                 M*Q
--                   ^
local lpeg = require "lpeg"
local P, R, S, C, Cp, Ct, V = lpeg.P, lpeg.R, lpeg.S, lpeg.C, lpeg.Cp, lpeg.Ct, lpeg.V

local verdicts = require "klineage.base.verdicts"

local M = {}

local function caret(text, pos, fmt, ...)
  return string.format(fmt, ...) .. string.format(" at column %d\n  %s\n  %s^", pos, text,
    string.rep(" ", pos - 1))
end

-- A runtime failure inside a compiled closure: caught by eval.
local EvalError = {}
local function fail(node, fmt, ...)
  error(setmetatable({ pos = node.pos, msg = string.format(fmt, ...) }, EvalError), 0)
end

---------------------------------------------------------------- parsing
local space = S(" \t\r\n") ^ 0
local function tok(p) return p * space end

local digits = R "09" ^ 1
local hex = P "0" * S "xX" * R("09", "af", "AF") ^ 1
local exponent = S "eE" * S "+-" ^ -1 * digits
local float_body = (digits * P "." * R "09" ^ 0 + P "." * digits) * exponent ^ -1 + digits * exponent
local number = Cp() * (
    C(float_body) * S "fF" ^ -1 / function(s) return { k = "num", v = tonumber(s) + 0.0 } end
  + C(hex + digits) * S "uUlL" ^ 0 / function(s)
      local v = tonumber(s)
      return { k = "num", v = math.tointeger(v) or v } -- too large for 64 bits: a float
    end
) / function(pos, node) node.pos = pos return node end

local ident = C((R("az", "AZ") + P "_") * (R("az", "AZ", "09") + P "_") ^ 0)

-- A left-associative level: operand (op operand)*.
local function binary_level(operand, ops)
  local op = Cp() * C(ops) * space
  return Ct(operand * (op * operand) ^ 0) / function(t)
    local node = t[1]
    for i = 2, #t, 3 do
      node = { k = "bin", op = t[i + 1], pos = t[i], a = node, b = t[i + 2] }
    end
    return node
  end
end

local grammar = P {
  "top",
  top = space * V "or_" * -P(1),
  or_ = binary_level(V "and_", P "||"),
  and_ = binary_level(V "bitor", P "&&"),
  bitor = binary_level(V "bitxor", P "|" * -P "|"),
  bitxor = binary_level(V "bitand", P "^"),
  bitand = binary_level(V "eq", P "&" * -P "&"),
  eq = binary_level(V "rel", P "==" + P "!="),
  rel = binary_level(V "shift", P "<=" + P ">=" + P "<" * -P "<" + P ">" * -P ">"),
  shift = binary_level(V "add", P "<<" + P ">>"),
  add = binary_level(V "mul", S "+-"),
  mul = binary_level(V "unary", S "*/%"),
  unary = Cp() * C(S "!-+~" - P "!=") * space * V "unary" / function(pos, op, a)
      return { k = "un", op = op, pos = pos, a = a }
    end
    + V "primary",
  primary = tok(number)
    + Cp() * tok(ident) * tok(P "(") * Ct((V "or_" * (tok(P ",") * V "or_") ^ 0) ^ -1) * tok(P ")")
      / function(pos, name, args) return { k = "call", name = name, pos = pos, args = args } end
    + Cp() * tok(ident) / function(pos, name) return { k = "name", name = name, pos = pos } end
    + tok(P "(") * V "or_" * tok(P ")"),
}

-- The furthest position any token reached: where a syntax error is.
local function furthest_error(text)
  -- Re-scan token by token to find where the grammar stopped making sense:
  -- the longest prefix that is a valid start of an expression.
  local best = 1
  for i = #text, 1, -1 do
    local head = text:sub(1, i)
    -- A prefix is viable when appending a name (and closing parens) parses.
    local opens = select(2, head:gsub("%(", "")) - select(2, head:gsub("%)", ""))
    for _, tail in ipairs({ "", " x", " x)" }) do
      local probe = head .. tail .. string.rep(")", math.max(opens, 0))
      if grammar:match(probe) then return i + 1 end
    end
  end
  return best
end

---------------------------------------------------------------- evaluation
local function is_int(v) return math.type(v) == "integer" end

local function truth(node, v)
  if type(v) == "boolean" then return v end
  if type(v) == "number" then return v ~= 0 end
  fail(node, "expected a number or a condition, got %s", type(v))
end

local function num(node, v, what)
  if type(v) ~= "number" then fail(node, "%s needs numbers, got %s", what, type(v)) end
  return v
end

local function int(node, v, what)
  if not is_int(v) then fail(node, "%s needs integers, got %s", what, math.type(v) or type(v)) end
  return v
end

local arith = {
  ["+"] = function(n, a, b) return num(n, a, "'+'") + num(n, b, "'+'") end,
  ["-"] = function(n, a, b) return num(n, a, "'-'") - num(n, b, "'-'") end,
  ["*"] = function(n, a, b) return num(n, a, "'*'") * num(n, b, "'*'") end,
  ["/"] = function(n, a, b)
    num(n, a, "'/'")
    num(n, b, "'/'")
    if is_int(a) and is_int(b) then
      fail(n, "'/' between integers (%d / %d) is not allowed: C truncates and Lua does not; use cdiv(a, b) or a float", a, b)
    end
    return a / b
  end,
  ["%"] = function(n, a, b)
    int(n, a, "'%'")
    int(n, b, "'%'")
    if b == 0 then fail(n, "modulo by zero") end
    return math.fmod(a, b) -- integer fmod truncates, as C does
  end,
  ["<<"] = function(n, a, b) return int(n, a, "'<<'") << int(n, b, "'<<'") end,
  [">>"] = function(n, a, b) return int(n, a, "'>>'") >> int(n, b, "'>>'") end,
  ["&"] = function(n, a, b) return int(n, a, "'&'") & int(n, b, "'&'") end,
  ["|"] = function(n, a, b) return int(n, a, "'|'") | int(n, b, "'|'") end,
  ["^"] = function(n, a, b) return int(n, a, "'^'") ~ int(n, b, "'^'") end,
  ["=="] = function(n, a, b) return num(n, a, "'=='") == num(n, b, "'=='") end,
  ["!="] = function(n, a, b) return num(n, a, "'!='") ~= num(n, b, "'!='") end,
  ["<"] = function(n, a, b) return num(n, a, "'<'") < num(n, b, "'<'") end,
  ["<="] = function(n, a, b) return num(n, a, "'<='") <= num(n, b, "'<='") end,
  [">"] = function(n, a, b) return num(n, a, "'>'") > num(n, b, "'>'") end,
  [">="] = function(n, a, b) return num(n, a, "'>='") >= num(n, b, "'>='") end,
}

-- C's integer division, for kernel constants (`constexpr int TM = BM / 8;`),
-- which are C and mean what C says.
local function c_divide(n, a, b)
  num(n, a, "'/'")
  num(n, b, "'/'")
  if is_int(a) and is_int(b) then
    if b == 0 then fail(n, "division by zero") end
    local q = a // b
    if q < 0 and q * b ~= a then q = q + 1 end -- truncate toward zero
    return q
  end
  return a / b
end

local functions = {
  cdiv = function(n, args)
    if #args ~= 2 then fail(n, "cdiv takes 2 arguments, got %d", #args) end
    local a, b = int(n, args[1], "cdiv"), int(n, args[2], "cdiv")
    if b == 0 then fail(n, "cdiv by zero") end
    return -((-a) // b)
  end,
  min = function(n, args)
    if #args < 2 then fail(n, "min takes at least 2 arguments, got %d", #args) end
    local m = num(n, args[1], "min")
    for i = 2, #args do m = math.min(m, num(n, args[i], "min")) end
    return m
  end,
  max = function(n, args)
    if #args < 2 then fail(n, "max takes at least 2 arguments, got %d", #args) end
    local m = num(n, args[1], "max")
    for i = 2, #args do m = math.max(m, num(n, args[i], "max")) end
    return m
  end,
}
M.functions = {}
for name in pairs(functions) do M.functions[#M.functions + 1] = name end
table.sort(M.functions)

-- Compiles a node to a closure over the list of lookup tables.
local function build(node, names, seen, opts)
  local k = node.k
  if k == "num" then
    local v = node.v
    return function() return v end
  elseif k == "name" then
    local name = node.name
    if not seen[name] then
      seen[name] = true
      names[#names + 1] = name
    end
    return function(envs)
      for i = 1, envs.n do
        local v = envs[i][name]
        if v ~= nil then
          if type(v) ~= "number" and type(v) ~= "boolean" then
            fail(node, "name '%s' is a %s, not a number", name, type(v))
          end
          return v
        end
      end
      fail(node, "unknown name '%s'", name)
    end
  elseif k == "call" then
    local f = functions[node.name]
    if not f then return nil, node end
    local args = {}
    for i, a in ipairs(node.args) do
      local fa, bad = build(a, names, seen, opts)
      if not fa then return nil, bad end
      args[i] = fa
    end
    return function(envs)
      local vals = {}
      for i = 1, #args do vals[i] = args[i](envs) end
      return f(node, vals)
    end
  elseif k == "un" then
    local a, bad = build(node.a, names, seen, opts)
    if not a then return nil, bad end
    local op = node.op
    if op == "!" then return function(envs) return not truth(node, a(envs)) end end
    if op == "-" then return function(envs) return -num(node, a(envs), "unary '-'") end end
    if op == "~" then return function(envs) return ~int(node, a(envs), "'~'") end end
    return function(envs) return num(node, a(envs), "unary '+'") end
  else -- bin
    local a, bad = build(node.a, names, seen, opts)
    if not a then return nil, bad end
    local b, bad2 = build(node.b, names, seen, opts)
    if not b then return nil, bad2 end
    local op = node.op
    if op == "&&" then return function(envs) return truth(node, a(envs)) and truth(node, b(envs)) end end
    if op == "||" then return function(envs) return truth(node, a(envs)) or truth(node, b(envs)) end end
    local f = arith[op]
    if op == "/" and opts.c_division then f = c_divide end
    return function(envs) return f(node, a(envs), b(envs)) end
  end
end

local Compiled = {}
Compiled.__index = Compiled
Compiled.__tostring = function(c) return "expr(" .. c.text .. ")" end

-- c:eval(env1, env2, ...) -> value | nil, failure (bad_input)
function Compiled:eval(...)
  local envs = table.pack(...)
  for i = 1, envs.n do
    if type(envs[i]) ~= "table" then error("expr eval: argument " .. i .. " must be a table", 2) end
  end
  local ok, v = pcall(self.fn, envs)
  if ok then return v end
  if getmetatable(v) == EvalError then return nil, verdicts.failure("bad_input", caret(self.text, v.pos, "%s", v.msg)) end
  error(v, 0)
end

-- expr.compile(text [, { c_division = true }]) -> compiled | nil, failure (bad_input)
-- c_division: `/` between integers truncates as in C (for C constants only).
function M.compile(text, opts)
  opts = opts or {}
  if type(text) == "number" then text = tostring(text) end
  local function bad_input(msg) return nil, verdicts.failure("bad_input", msg) end
  if type(text) ~= "string" then return bad_input("expression must be a string, got " .. type(text)) end
  if text:match("^%s*$") then return bad_input("empty expression") end
  local tree = grammar:match(text)
  if not tree then
    local pos = furthest_error(text)
    if pos > #text then return bad_input(caret(text, #text + 1, "incomplete expression")) end
    return bad_input(caret(text, pos, "syntax error near '%s'", text:sub(pos, pos + 9)))
  end
  local names = {}
  local fn, bad = build(tree, names, {}, opts)
  if not fn then
    return bad_input(caret(text, bad.pos, "unknown function '%s' (known: %s)", bad.name, table.concat(M.functions, ", ")))
  end
  return setmetatable({ text = text, fn = fn, names = names }, Compiled)
end

local cache = setmetatable({}, { __mode = "v" })

-- expr.eval(text, env...) -> value | nil, failure
function M.eval(text, ...)
  local c = cache[text]
  if not c then
    local err
    c, err = M.compile(text)
    if not c then return nil, err end
    cache[text] = c
  end
  return c:eval(...)
end

return M
