-- coarsen(F [, axis=NAME]): each thread computes F points of one axis
-- (the one on threadIdx.x by default), a block's threads first, so that
-- neighbouring threads still touch neighbouring points:
--   point = blockIdx.d * (B * F) + u * B + threadIdx.d,  u = 0 .. F-1
-- with the guard skipping a tail point (`continue`). The grid shrinks F
-- times along that dimension.
local ir = require "klineage.kir.ir"
local geometry = require "klineage.kir.geometry"
local analysis = require "klineage.kir.analysis"

local M = { name = "coarsen" }

local POINT = "u_"

local function moves_with(access, axis, digits)
  if not access.coefs then return false end
  if access.coefs[axis] then return true end
  for dn, dg in pairs(digits) do
    if dg.of == axis and access.coefs[dn] then return true end
  end
  return false
end

function M.apply(k, p)
  local f = p.factor or p[1]
  if type(f) ~= "number" or f < 2 or f > 64 or f ~= math.floor(f) then return nil, "coarsen needs a factor from 2 to 64" end
  -- staged first: stage's tile exchange gives each thread rows of its own
  if k.schedule.staged then return nil, "stage placed barriers and shared tiles: coarsen does not compose with it" end
  if k.schedule.points then return nil, "already coarsened" end
  if k.schedule.vector then return nil, "vectorize already gave each thread consecutive points: coarsen does not compose with it" end
  if k.schedule.split then return nil, "split_reduce already gave each output several threads" end
  local out = ir.clone(k)
  local axis = p.axis and ir.axis(out, p.axis) or ir.axis_on(out, "x")
  if not axis then return nil, "no axis " .. tostring(p.axis or "on threadIdx.x") end
  if not axis.block then return nil, axis.name .. " is blockIdx alone: no threads to coarsen" end
  if not axis.extent_ann then return nil, "the guard gives no bound for " .. axis.name .. ": a tail point could not be skipped" end
  if not tonumber(axis.threads_ann) and not axis.threads_ann:match("^[%a_][%w_]*$") then
    return nil, "the block size of " .. axis.name .. " is not a plain number or name"
  end
  local bad
  ir.walk(out.body, function(s, depth)
    if s.s == "return" and depth > 0 then bad = "a return inside a loop: it would end the thread's other points" end
    if s.s == "let" and s.name == POINT then bad = "the kernel already names " .. POINT end
  end)
  if bad then return nil, bad end
  local a = analysis.analyze(out)
  for _, x in ipairs(a.accesses) do
    if x.kind == "store" and not moves_with(x, axis.name, a.digits) then
      return nil, string.format("the store %s %s: two points of one thread may write the same place", x.text,
        x.indirect and "is indirect" or "does not move with " .. axis.name)
    end
  end
  local block = tonumber(axis.threads_ann) and ir.num(tonumber(axis.threads_ann)) or ir.var(axis.threads_ann)
  if axis.block and axis.block.k == "num" then block = ir.copy(axis.block) end
  local bid = ir.member("blockIdx", axis.dim)
  if axis.cast then bid = { k = "cast", type = axis.cast, a = bid } end
  local per_block = ir.bin("*", block, ir.num(f))
  axis.expr = ir.bin("+", ir.bin("+", ir.bin("*", bid, per_block), ir.bin("*", ir.var(POINT), ir.copy(block))),
    ir.member("threadIdx", axis.dim))
  axis.per_block_ann = geometry.simple(axis.threads_ann) .. " * " .. f
  out.schedule.points = { var = POINT, count = f, axis = axis.name }
  local ok, why = geometry.relaunch(out)
  if not ok then return nil, why end
  out.applied[#out.applied + 1] = "coarsen"
  local atomics = 0
  for _, x in ipairs(a.accesses) do if x.kind == "atomic" then atomics = atomics + 1 end end
  return out, string.format("legal: %d points of %s per thread, strided by the block so neighbours stay neighbours; every store moves with %s, so the points write apart%s; the guard skips the tail",
    f, axis.name, axis.name, atomics > 0 and " (atomics commute)" or "")
end

-- 2 and 4 along threadIdx.x, 2 along each other axis with threads.
function M.candidates(k)
  local out = { { factor = 2 }, { factor = 4 } }
  for _, a in ipairs(k.axes) do
    if a.block and a.dim ~= "x" then out[#out + 1] = { factor = 2, axis = a.name } end
  end
  return out
end

return M
