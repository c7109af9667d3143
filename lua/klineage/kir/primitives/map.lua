-- map(x=AXIS, y=AXIS, z=AXIS, block=BXxBYxBZ): which output axis goes to
-- which thread dimension, and the block shape. Moving the axis whose
-- stores and loads are unit-stride onto threadIdx.x is the coalescing
-- remap. Every point is still computed once by one thread: the guard
-- keeps its bounds, the grid is cdiv(extent, block) on each dimension.
local ir = require "klineage.kir.ir"
local geometry = require "klineage.kir.geometry"
local analysis = require "klineage.kir.analysis"

local M = { name = "map" }

local DIMS = { "x", "y", "z" }

local function stride_report(k)
  local a = analysis.analyze(k)
  local unit, strided = {}, {}
  for _, x in ipairs(a.accesses) do
    if x.stride_x == "1" then unit[#unit + 1] = x.text
    elseif x.stride_x and x.stride_x ~= "0" then strided[#strided + 1] = x.text .. " (stride " .. x.stride_x .. ")" end
  end
  return unit, strided
end
M.stride_report = stride_report

function M.apply(k, p)
  if k.schedule.points or k.schedule.split then return nil, "map goes first: coarsen or split_reduce already shaped the threads" end
  -- these index by the block shape they were given: a new one would break them
  if k.schedule.staged then return nil, "map goes before stage: its tiles and barriers are sized by the block" end
  if k.schedule.register_tile then return nil, "map goes before register_tile: its points are strided by the block" end
  if k.schedule.vector then return nil, "map goes before vectorize: its points are counted in vectors of the block" end
  local out = ir.clone(k)
  local assigned, used = {}, {}
  for _, d in ipairs(DIMS) do
    local name = p[d]
    if name then
      local a = ir.axis(out, name)
      if not a then return nil, "no output axis named " .. tostring(name) end
      if assigned[name] then return nil, name .. " is given two thread dimensions" end
      if not a.block then return nil, name .. " is blockIdx alone (no threads along it): it cannot take a thread dimension" end
      if not a.extent_ann then return nil, "the guard gives no bound for " .. name .. ": the grid would not be known to cover it" end
      assigned[name], used[d] = d, true
    end
  end
  -- axes not named keep their dimension unless it was taken
  for _, a in ipairs(out.axes) do
    if assigned[a.name] then
      a.dim = assigned[a.name]
    elseif used[a.dim] then
      local free
      for _, d in ipairs(DIMS) do
        if not used[d] and not free then
          local holder = ir.axis_on(out, d)
          if not holder or assigned[holder.name] or holder == a then free = d end
        end
      end
      if not free then return nil, "no thread dimension left for " .. a.name end
      a.dim = free
      used[free] = true
    else
      used[a.dim] = true
    end
  end
  local seen = {}
  for _, a in ipairs(out.axes) do
    if seen[a.dim] then return nil, "two axes on dimension " .. a.dim end
    seen[a.dim] = true
  end
  local block = p.block or {}
  local total = 1
  for i, d in ipairs(DIMS) do
    local a = ir.axis_on(out, d)
    local b = block[i]
    if a and a.block then
      b = b or tonumber(a.threads_ann)
      if not b then return nil, "give block sizes: " .. a.name .. "'s block is " .. a.threads_ann .. ", not a number" end
      if b < 1 or b ~= math.floor(b) then return nil, "a block size must be a positive integer" end
      a.block = ir.num(b)
      a.threads_ann, a.per_block_ann = tostring(b), tostring(b)
      a.expr = nil
      total = total * b
    elseif b and b ~= 1 then
      return nil, "block " .. d .. " = " .. b .. " but no axis with threads is on " .. d
    end
  end
  if total > 1024 then return nil, "a block of " .. total .. " threads: CUDA allows 1024" end
  if total % 32 ~= 0 then return nil, "a block of " .. total .. " threads is not whole warps" end
  local ok, why = geometry.relaunch(out)
  if not ok then return nil, why end
  local unit, strided = stride_report(out)
  local tx = ir.axis_on(out, "x")
  local reason = string.format("legal: every point keeps one thread (the guard bounds each axis, grid = cdiv(extent, block)); %s on threadIdx.x, block %d: unit stride across threads for %s%s",
    tx and tx.name or "nothing", total, #unit > 0 and table.concat(unit, ", ") or "no access",
    #strided > 0 and "; strided: " .. table.concat(strided, ", ") or "")
  out.applied[#out.applied + 1] = "map"
  return out, reason
end

-- The remaps worth trying: the axis with the most unit-stride accesses on x.
function M.candidates(k)
  local out = {}
  local movable = {}
  for _, a in ipairs(k.axes) do
    if a.block and a.extent_ann then movable[#movable + 1] = a end
  end
  for _, a in ipairs(movable) do
    if #movable == 1 then
      for _, b in ipairs({ 128, 256 }) do out[#out + 1] = { x = a.name, block = { b } } end
    else
      -- each axis on x in turn, the others after it in the kernel's order
      local others = {}
      for _, o in ipairs(movable) do if o ~= a then others[#others + 1] = o end end
      if #others == 1 then
        out[#out + 1] = { x = a.name, y = others[1].name, block = { 32, 8 } }
      else
        out[#out + 1] = { x = a.name, y = others[1].name, z = others[2].name, block = { 32, 4, 2 } }
      end
    end
  end
  return out
end

return M
