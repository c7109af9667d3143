-- unroll(F [, loop=VAR]): the loop (the first constant-step loop by default)
-- runs F iterations a trip, each a copy of the body with the variable
-- offset, then the remainder one by one. Iterations keep their order, so
-- even a sequential loop stays exact.
local ir = require "klineage.kir.ir"
local analysis = require "klineage.kir.analysis"

local M = { name = "unroll" }

local function replace(stmts, old, new)
  for i, s in ipairs(stmts) do
    if s == old then stmts[i] = new return true end
    for _, key in ipairs({ "body", "then_", "else_" }) do
      if s[key] and replace(s[key], old, new) then return true end
    end
  end
end

function M.apply(k, p)
  local f = p.factor or p[1]
  if type(f) ~= "number" or f < 2 or f > 16 or f ~= math.floor(f) then return nil, "unroll needs a factor from 2 to 16" end
  local out = ir.clone(k)
  local a = analysis.analyze(out)
  local loop
  for _, l in ipairs(a.loops.list) do
    if not loop and (p.loop == nil or p.loop == l.var) and (p.loop or l.canonical) then loop = l end
  end
  if not loop then return nil, p.loop and ("no loop over " .. p.loop) or "no constant-step loop to unroll" end
  if not loop.canonical then return nil, "the loop over " .. loop.var .. " is not a constant-step loop with a < or <= bound" end
  local s, v = loop.stmt, loop.var
  local bad
  ir.walk(s.body, function(t)
    if t.s == "break" or t.s == "continue" or t.s == "return" then bad = "the body leaves early (" .. t.s .. ")" end
    if t.s == "raw" then bad = "the body holds an opaque loop" end
    if ir.writes(t)[v] then bad = "the body writes " .. v end
    if t.s == "pragma" then bad = "the body holds a pragma" end
  end)
  if bad then return nil, bad end
  for name in pairs(ir.vars(loop.hi)) do
    ir.walk(s.body, function(t)
      if ir.writes(t)[name] then bad = "the bound reads " .. name .. ", which the body writes" end
    end)
  end
  if bad then return nil, bad end
  local copies = {}
  for i = 0, f - 1 do
    local at = i == 0 and ir.var(v) or ir.bin("+", ir.var(v), ir.num(i * loop.step))
    local copy = ir.subst_stmts(s.body, { [v] = at })
    local scoped = false
    for _, t in ipairs(copy) do if t.s == "let" then scoped = true end end
    -- a copy needs its own scope only when it declares something
    if scoped then
      copies[#copies + 1] = { s = "block", body = copy }
    else
      for _, t in ipairs(copy) do copies[#copies + 1] = t end
    end
  end
  local cond = ir.bin("<", ir.bin("+", ir.var(v), ir.num((f - 1) * loop.step)), ir.copy(loop.hi))
  local main = { s = "for", cond = cond, step = { s = "assign", lhs = ir.var(v), op = "+=", rhs = ir.num(f * loop.step) }, body = copies }
  local tail = { s = "for", cond = ir.bin("<", ir.var(v), ir.copy(loop.hi)), step = ir.copy_stmts({ s.step })[1],
    body = ir.copy_stmts(s.body) }
  local nest = { s = "block", body = { ir.copy_stmts({ s.init })[1], main, tail } }
  replace(out.body, s, nest)
  out.applied[#out.applied + 1] = "unroll"
  return out, string.format("legal: the loop over %s runs %d copies a trip and the remainder one by one; the iterations keep their order (no reassociation); the bound %s is not written in the body",
    v, f, ir.text(loop.hi))
end

-- 4 on each constant-step loop, by its variable (the first one of a name).
function M.candidates(k)
  local out, seen = {}, {}
  for _, l in ipairs(analysis.analyze(k).loops.list) do
    if l.canonical and not seen[l.var] then
      seen[l.var] = true
      out[#out + 1] = { factor = 4, loop = l.var }
    end
  end
  return out
end

return M
