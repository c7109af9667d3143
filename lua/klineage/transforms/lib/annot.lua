-- What the annotation transforms (ldg, pragma_unroll, launch_bounds) share:
-- the unit's integer constants, constant expressions, the trip count of a
-- counted for loop, and stable function names for site keys.
--
--   annot.constants(unit) -> { NAME = integer }  (kl.source's constants)
--   annot.eval(text, consts) -> integer | nil     (C integer division)
--   annot.trip_count(loop, consts) -> n | nil: `for (v = A; v OP B; STEP)`
--       with A, B and STEP's amount constant, OP < <= > >= != and STEP one
--       of ++v v++ --v v-- and v op= C (+ - * / << >>); nil for any other
--       loop, or one of more than 65536 trips
--   annot.functions(unit [, opts]) -> { { fn = fn, name = unique name }... }
--       a second function of the same name (an overload) is "name@2"
--   annot.function_named(unit, name [, opts]) -> fn | nil
local expr = require "klineage.base.expr"
local support = require "klineage.transforms.support"

local M = {}

function M.constants(unit)
  local out = {}
  for _, c in ipairs(unit:constants()) do
    if math.type(c.value) == "integer" then out[c.name] = c.value end
  end
  return out
end

function M.eval(text, consts)
  if type(text) ~= "string" or #text > 400 then return nil end
  local c = expr.compile(text, { c_division = true })
  if not c then return nil end
  local ok, v = pcall(c.eval, c, consts)
  if ok and math.type(v) == "integer" then return v end
end

-- Compares like C's integer comparisons.
local TEST = {
  ["<"] = function(x, y) return x < y end, ["<="] = function(x, y) return x <= y end,
  [">"] = function(x, y) return x > y end, [">="] = function(x, y) return x >= y end,
  ["!="] = function(x, y) return x ~= y end,
}
local MIRROR = { ["<"] = ">", ["<="] = ">=", [">"] = "<", [">="] = "<=", ["!="] = "!=" }

-- C's truncating division, which Lua's // is not for negative operands.
local function cdiv0(a, b)
  local q = a // b
  if q < 0 and q * b ~= a then q = q + 1 end
  return q
end

-- The next value of the loop variable after `step`, as a function.
local UPDATE = {
  ["+="] = function(v, c) return v + c end, ["-="] = function(v, c) return v - c end,
  ["*="] = function(v, c) return v * c end, ["/="] = function(v, c) return c ~= 0 and cdiv0(v, c) or nil end,
  ["<<="] = function(v, c) return (c >= 0 and c < 62) and v << c or nil end,
  [">>="] = function(v, c) return (c >= 0 and c < 63) and v >> c or nil end,
}

-- The loop variable and its start: `int v = A` or `v = A`.
local function start_of(init)
  if init.kind == "decl" or init.kind == "decl_stmt" then
    local ok, d = pcall(init.declaration, init)
    local dl = ok and d and d.declarators
    if dl and #dl == 1 and dl[1].init then return dl[1].name.text, dl[1].init.text end
  elseif init.kind == "assign" and init.op == "=" then
    return init:field("lhs"):text(), init:field("rhs"):text()
  end
end

-- The step as (update function, amount text), or nil.
local function step_of(step, var)
  if step.kind == "unary" or step.kind == "postfix" then
    local x = step:field("operand")
    if x and x:text() == var then
      if step.op == "++" then return UPDATE["+="], "1" elseif step.op == "--" then return UPDATE["-="], "1" end
    end
  elseif step.kind == "assign" and UPDATE[step.op] and step:field("lhs"):text() == var then
    return UPDATE[step.op], step:field("rhs"):text()
  end
end

-- Iterations are counted by running the loop header: exact for every step
-- form above, and a loop past LIMIT trips is no constant worth unrolling.
local LIMIT = 1 << 16

function M.trip_count(loop, consts)
  if loop.kind ~= "for" then return nil end
  local init, cond, step = loop:field("init"), loop:field("cond"), loop:field("step")
  if not (init and cond and step) or cond.kind ~= "binary" or not TEST[cond.op] then return nil end
  local var, a = start_of(init)
  if not var then return nil end
  local op, b = cond.op, nil
  if cond:field("lhs"):text() == var then b = cond:field("rhs"):text()
  elseif cond:field("rhs"):text() == var then op, b = MIRROR[cond.op], cond:field("lhs"):text()
  else return nil end
  local update, amount = step_of(step, var)
  if not update then return nil end
  local v, hi, c = M.eval(a, consts), M.eval(b, consts), M.eval(amount, consts)
  if not (v and hi and c) then return nil end
  local n = 0
  while TEST[op](v, hi) do
    n = n + 1
    if n > LIMIT then return nil end
    v = update(v, c)
    if not v then return nil end
  end
  return n
end

function M.functions(unit, opts)
  local out, seen = {}, {}
  for _, fn in ipairs(support.functions(unit, opts)) do
    local name = fn:name() or "?"
    seen[name] = (seen[name] or 0) + 1
    out[#out + 1] = { fn = fn, name = seen[name] > 1 and (name .. "@" .. seen[name]) or name }
  end
  return out
end

function M.function_named(unit, name, opts)
  for _, f in ipairs(M.functions(unit, opts)) do
    if f.name == name then return f.fn end
  end
end

return M
