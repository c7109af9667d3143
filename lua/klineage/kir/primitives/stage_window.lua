-- stage's window form, for a sliding window in a reduction loop: an
-- operand read at a + v or a - v, where a is a threaded axis and v the
-- loop's variable (a convolution's x[t + k], a causal filter's or a
-- moving sum's x[i - k]). No two threads read the same element at the
-- same iteration, so the tile form finds no reuse, but across a tile of
-- the loop the block's threads read a window of B + T - 1 elements
-- ([a0 + v0, a0 + B - 1 + v0 + T - 1] for a + v) for B x T reads.
-- stage.lua loads that window once a tile.
--
-- A read under if-conditions (a zero-padded edge: `if (t + k >= 0 &&
-- t + k < len)`) is staged when every condition, like the index, sees a
-- and v only through a + v (a - v): then any thread and iteration with
-- the same sum (difference) read the same element under the same
-- verdict, and the load of the window element can be decided at one
-- representative of them (stage.lua's window_read). Nothing is read that
-- no live thread of the block reads.
local ir = require "klineage.kir.ir"
local poly = require "klineage.kir.poly"

local M = {}

local WIDENING = { long = true, ["long long"] = true, ["unsigned long"] = true, size_t = true, int64_t = true,
                   ptrdiff_t = true }

local function mentions(e, a, v)
  local vars = ir.vars(e)
  return vars[a] or vars[v]
end

-- Whether e reads a and v only through their sum (sign 1, the default)
-- or their difference a - v (sign -1): any (a, v) with the same a + v
-- (a - v) gives it the same value. Sums and products go through the
-- integer polynomials; a narrowing cast of a or v alone, a load or a
-- call of them does not pass.
function M.through_sum(e, a, v, sign)
  sign = sign or 1
  if not mentions(e, a, v) then return true end
  local narrowing = false
  ir.visit(e, function(x)
    if x.k == "cast" and not WIDENING[x.type] and mentions(x.a, a, v) then narrowing = true end
  end)
  if not narrowing then
    local p = poly.of(e)
    if p then
      local ca, ra = poly.split(p, a)
      local cv = ca and poly.split(ra, v)
      if not cv then return false end
      local ka, na = poly.monomial(ca)
      local kv, nv = poly.monomial(cv)
      return ka == "" and kv == "" and nv == sign * na
    end
  end
  if e.k == "index" or e.k == "call" or e.k == "var" then return false end
  if e.k == "cast" then return M.through_sum(e.a, a, v, sign) end
  for _, key in ipairs({ "a", "b", "c" }) do
    if e[key] and not M.through_sum(e[key], a, v, sign) then return false end
  end
  return true
end

-- The load's address as an offset from its array: the pointer's additive
-- terms and the index (nil where a cast changes the element type).
local function offset_of(full)
  local off, b = full.idx, full.base
  while b.k == "bin" and (b.op == "+" or b.op == "-") do
    off = ir.bin(b.op, off, b.b)
    b = b.a
  end
  if b.k ~= "var" then return nil end
  return off
end

local function term_count(e, op)
  if e.k == "bin" and e.op == op then return term_count(e.a, op) + term_count(e.b, op) end
  return 1
end

-- Whether the guard says no more than the axes' extents: then a thread is
-- live exactly when each axis is inside its extent, and the window can
-- pick a live representative from them alone.
local function guard_is_extents(k)
  if not k.guard then return true end
  local bounded = 0
  for _, ax in ipairs(k.axes) do if ax.extent then bounded = bounded + 1 end end
  return term_count(k.guard.cond, k.guard.form == "return" and "||" or "&&") <= bounded
end

-- The window along one threaded axis, or nil and why.
--   full: the load with the lets inlined; read: { conds (each must hold),
--   opaque (why the conditions are not all known) }; deps: { ax, name }
--   the index's threaded axes
--   cx = { kernel, v (the loop's variable), known(name) -> true for a name
--     any thread of the block may evaluate (a parameter, a uniform let, an
--     axis without threads), inline(expr) -> the expr with the lets inlined }
-- -> { axis, name, sign (1: a + v, -1: a - v), others (the other deps), conds (inlined) }
function M.find(full, read, deps, cx)
  local v = cx.v
  if read.opaque then return nil, "it is read under " .. read.opaque end
  local off = offset_of(full)
  local p = off and poly.of(off)
  local ax
  for _, d in ipairs(deps) do
    local c = p and poly.split(p, d.name)
    if c and poly.monomial(c) == "" then
      if ax then return nil, "it slides along two threaded axes" end
      ax = d
    end
  end
  if not ax then return nil, "its index is not a threaded axis plus or minus " .. v end
  local a = ax.name
  if not off then return nil, "its pointer is cast" end
  -- the index reads a + v (a window sliding forward) or a - v (back)
  local sign = (M.through_sum(off, a, v, 1) and 1) or (M.through_sum(off, a, v, -1) and -1) or nil
  if not sign then
    return nil, "its index does not read " .. a .. " and " .. v .. " only as " .. a .. " + " .. v .. " or " .. a .. " - " .. v
  end
  local as = a .. (sign == 1 and " + " or " - ") .. v
  if not guard_is_extents(cx.kernel) then return nil, "the guard says more than the axes' extents" end
  local conds, others = {}, {}
  -- the index's other threaded axes: a window a row of them, each loaded
  -- with its row's own coordinate, so a condition may read them too
  local row = {}
  for _, d in ipairs(deps) do
    if d ~= ax then others[#others + 1], row[d.name] = d, true end
  end
  for _, c in ipairs(read.conds or {}) do
    local e = cx.inline(c)
    local bad
    ir.visit(e, function(x)
      if x.k == "index" or x.k == "call" then bad = "its condition " .. ir.text(c) .. " reads memory or calls a function" end
      if x.k == "var" and x.name ~= a and x.name ~= v and not row[x.name] and not cx.known(x.name) then
        bad = bad or "its condition " .. ir.text(c) .. " reads " .. x.name .. ", which only its own thread knows"
      end
    end)
    if bad then return nil, bad end
    if not M.through_sum(e, a, v, sign) then
      return nil, "its condition " .. ir.text(c) .. " does not read " .. a .. " and " .. v .. " only as " .. as
    end
    conds[#conds + 1] = e
  end
  return { axis = ax.ax, name = a, sign = sign, others = others, conds = conds }
end

return M
