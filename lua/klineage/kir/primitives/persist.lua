-- persist(dim=D, blocks=G): a grid of at most G blocks along D, each block
-- taking the blocks of the unfolded grid b, b + G, b + 2G, ... in turn (a
-- persistent grid along x; along y or z, where CUDA allows 65,535 blocks,
-- a fold that lets a schedule with one block an output launch on any
-- size). The emitter wraps the whole body in the loop over those turns
-- (the block index renamed everywhere), turns a `return` into the end of
-- the turn, and ends each turn with a barrier where the kernel has shared
-- memory: no thread refills it before every thread is done with it.
-- It goes last: no primitive follows it.
local ir = require "klineage.kir.ir"
local geometry = require "klineage.kir.geometry"

local M = { name = "persist" }

local LIMIT = { x = 2147483647, y = 65535, z = 65535 }

-- The fold's own names: the turn's block index along D, the end label.
function M.var(dim) return "b" .. dim .. "_" end
M.NEXT = "persist_next_"

-- A predicate: the expression is `obj.dim` (blockIdx.y, gridDim.x).
local function member(obj, dim)
  return function(x) return x.k == "member" and x.obj.k == "var" and x.obj.name == obj and x.field == dim end
end

-- Whether an expression of the statement lists (and of the axes and the
-- guard, with `whole`) satisfies pred.
local function mentions(k, pred, lists, whole)
  local hit = false
  local function look(e) ir.visit(e, function(x) if pred(x) then hit = true end end) end
  for _, list in ipairs(lists) do
    ir.walk(list, function(s)
      for _, e in ipairs(ir.exprs(s)) do look(e) end
    end)
  end
  if whole then
    for _, a in ipairs(k.axes) do if a.expr then look(a.expr) end end
    if k.guard then look(k.guard.cond) end
  end
  return hit
end

local function raw_text(k, word)
  local hit
  for _, list in ipairs({ k.uniform, k.pre or {}, k.body }) do
    ir.walk(list, function(s) if s.s == "raw" and s.text:find(word, 1, true) then hit = true end end)
  end
  return hit
end

function M.apply(k, p)
  local dim, blocks = p.dim or p[1] or "x", p.blocks
  if not LIMIT[dim] then return nil, "persist(dim=x|y|z, blocks=G)" end
  if math.type(blocks) ~= "integer" or blocks < 1 or blocks > LIMIT[dim] then
    return nil, string.format("blocks is 1 to %d along %s", LIMIT[dim], dim)
  end
  if k.schedule.persist then return nil, "already persistent" end
  if k.schedule.blocks then return nil, "split_reduce(blocks=K) counts an output's blocks by blockIdx: folding the grid would break the count" end
  local axis
  for _, a in ipairs(k.axes) do if a.dim == dim then axis = a end end
  if not axis then return nil, "no output axis on blockIdx." .. dim end
  -- the unfolded count, in C: cdiv(extent, points a block), or the grid
  -- the launch line gives an axis with no threads along it (a batch digit)
  local count, per_block
  if axis.block then
    if not axis.extent then return nil, "the guard gives no bound for " .. axis.name .. ": the unfolded grid is not known" end
    per_block = geometry.value(k, axis.per_block_ann)
    if not per_block then return nil, "the points a block takes along " .. dim .. " (" .. axis.per_block_ann .. ") are not a constant of the kernel" end
    count = per_block == 1 and ir.copy(axis.extent) or
      ir.bin("/", ir.bin("+", ir.copy(axis.extent), ir.num(per_block - 1)), ir.num(per_block))
  else
    for term in tostring(axis.grid_ann):gmatch("[^*]+") do
      term = term:match("^%s*(.-)%s*$")
      local t = term:match("^%d+$") and ir.num(tonumber(term)) or (term:match("^[%a_][%w_]*$") and ir.var(term))
      if not t then return nil, "the grid along " .. dim .. " (" .. tostring(axis.grid_ann) .. ") is not a product of names and numbers" end
      count = count and ir.bin("*", count, t) or t
    end
  end
  if mentions(k, member("gridDim", dim), { k.uniform, k.pre or {}, k.body }, true) then
    return nil, "the kernel reads gridDim." .. dim .. ": folded, it would read the smaller grid"
  end
  if raw_text(k, "blockIdx." .. dim) or raw_text(k, "gridDim." .. dim) then
    return nil, "an opaque statement reads blockIdx." .. dim .. " or gridDim." .. dim .. ": it cannot be renamed"
  end
  for _, n in ipairs({ M.var(dim), M.NEXT }) do
    if ir.declares(k, n) then return nil, "the kernel already names " .. n end
  end
  -- the uniform declarations stay before the loop (its bound may read them)
  local index = member("blockIdx", dim)
  if mentions(k, index, { k.uniform }) then return nil, "a declaration before the per-thread code reads blockIdx." .. dim .. ": it would move into the turns" end
  local out = ir.clone(k)
  local turn = ir.var(M.var(dim))
  local function rename(x) if index(x) then return ir.copy(turn) end end
  out.pre = ir.map_stmts(out.pre or {}, rename)
  out.body = ir.map_stmts(out.body, rename)
  for _, a in ipairs(out.axes) do
    a.expr = ir.map(require("klineage.kir.emit").axis_expr(a), rename)
  end
  if out.guard then out.guard = { cond = ir.map(out.guard.cond, rename), form = out.guard.form } end
  local barrier = false
  for _, list in ipairs({ out.pre, out.body }) do
    ir.walk(list, function(s)
      if s.s == "raw" and s.text:find("__shared__", 1, true) then barrier = true end
      if s.s == "expr" and s.e.k == "call" and s.e.fn == "__syncthreads" then barrier = true end
    end)
  end
  local i = geometry.INDEX[dim]
  local grid = out.launch.grid
  for j = #grid + 1, i do grid[j] = "1" end
  grid[i] = string.format("min(%s, %d)", grid[i], blocks)
  out.launch.changed = true
  out.schedule.persist = { dim = dim, blocks = blocks, count = count, barrier = barrier }
  out.applied[#out.applied + 1] = "persist"
  return out, string.format("legal: a grid of at most %d blocks along %s; block b takes the blocks b, b + %d, b + %d, ... of the unfolded grid of %s, so every point is computed once, as before; the turns' count is the same for every thread of a block%s",
    blocks, dim, blocks, 2 * blocks, ir.text(count),
    barrier and ", and a thread done early waits at the barrier that ends each turn: shared memory is refilled only after every thread is done with it" or "")
end

-- The search proposes a fold where a schedule cannot launch (search/schedules.lua);
-- nothing is offered on its own.
function M.candidates() return {} end

return M
