-- Global-memory coalescing: threadIdx.x, the index that neighbouring
-- threads of a warp differ in, should walk the output's unit-stride
-- dimension, so a warp's stores (and the loads that follow the same index)
-- touch consecutive addresses instead of addresses a whole row apart.
--
-- Two kinds of site. The 2-D kind (sgemm v0 -> v1): the kernel's first two
-- statements are
--   int R = blockIdx.a * E + threadIdx.a;  int C = blockIdx.b * F + threadIdx.b;
-- with {a, b} = {x, y}; these four are the only thread and block indices
-- of the whole unit; no warp-level primitive is used; every store through
-- a subscript is `P[O * S + U]` with {O, U} = {R, C}, all with the same
-- unit-stride index U; and the one launch line has 2-D grid and block.
-- Then swapping the x and y axes everywhere (the two declarations and the
-- launch's grid and block) is a renaming of threads that no thread can
-- observe. apply is offered when U follows threadIdx.y, undo when it
-- follows threadIdx.x; both do the same swap, writing the declaration of
-- the x index first, as the lineage does.
-- The 1-D kind (conv2d v0 -> v1, lib/linear_index.lua): a global index
-- split into mixed-radix digits; apply peels them off in the output
-- layout's reverse order (the store becomes P[i]), undo moves the layout's
-- outermost digit innermost again (the naive order) and spells the store's
-- subscript out.
local support = require "klineage.transforms.support"
local tiling = require "klineage.transforms.lib.tiling"
local linear = require "klineage.transforms.lib.linear_index"

local T = {
  name = "coalesce",
  intent = "map threadIdx.x to the output's unit-stride index so each warp's global accesses coalesce",
}

local DECL = "int $V = blockIdx . $A * $E + threadIdx . $A ;"
local BUILTIN = { threadIdx = true, blockIdx = true, blockDim = true, gridDim = true }
local WARP = { "^__shfl", "^__ballot", "^__any", "^__all", "^__activemask", "^__syncwarp", "^warpSize$",
               "^__match", "^__reduce", "^tiled_partition", "^coalesced_threads", "^__lane" }

local function warp_level(unit)
  for id in unit:walk({ "ident" }) do
    local s = id:text()
    for _, p in ipairs(WARP) do if s:match(p) then return true end end
  end
end

local function builtin_uses(unit)
  local n = 0
  for m in unit:walk({ "member" }) do
    local o = m:field("object")
    if o and o.kind == "ident" and BUILTIN[o:text()] then n = n + 1 end
  end
  return n
end

-- The unit-stride index of every subscript store, if they all agree.
local function store_index(fn, vars)
  local unit_stride
  for a in fn:body():walk({ "assign" }) do
    local lhs = a:field("lhs")
    if lhs and lhs.kind == "index" then
      local c = tiling.match("$P [ $O * $S + $U ]", tiling.tokens(lhs))
      if not (c and vars[c.O] and vars[c.U] and c.O ~= c.U) then return nil end
      if unit_stride and unit_stride ~= c.U then return nil end
      unit_stride = c.U
    end
  end
  return unit_stride
end

local OTHER = { x = "y", y = "x" }
local function swap_axes(text)
  for _, b in ipairs({ "threadIdx", "blockIdx" }) do
    text = text:gsub("(%f[%w_]" .. b .. "%s*%.%s*)([xy])%f[^%w_]", function(head, a) return head .. OTHER[a] end)
  end
  return text
end

-- The 1-D kind (lib/linear_index.lua): a thread's block mates change, so
-- nothing may let threads see one another.
local function linear_site(unit, fn)
  if warp_level(unit) or builtin_uses(unit) ~= 2 or tiling.taken(unit, "__syncthreads") or tiling.taken(unit, "__shared__") then
    return nil
  end
  local f = linear.find(unit, fn)
  return f and support.site(T, unit, fn, f)
end

function T.find(unit)
  local sites = {}
  local fn = tiling.kernel(unit)
  if not fn then return sites end
  sites[1] = linear_site(unit, fn)
  if sites[1] or warp_level(unit) or builtin_uses(unit) ~= 4 then return sites end
  local launch = tiling.launch(unit)
  if not launch or #launch.grid ~= 2 or #launch.block ~= 2 then return sites end
  local stmts = fn:body():children()
  if #stmts < 3 then return sites end
  local d1, d2 = stmts[1], stmts[2]
  local c1 = d1.kind == "decl_stmt" and tiling.match(DECL, tiling.tokens(d1))
  local c2 = d2.kind == "decl_stmt" and tiling.match(DECL, tiling.tokens(d2))
  if not (c1 and c2) or c1.V == c2.V or c1.A == c2.A then return sites end
  if not ((c1.A == "x" or c1.A == "y") and (c2.A == "x" or c2.A == "y")) then return sites end
  -- the swap reorders them: neither multiplier may name the other index
  if c2.E == c1.V or c1.E == c2.V then return sites end
  local axis = { [c1.V] = c1.A, [c2.V] = c2.A }
  local u = store_index(fn, { [c1.V] = true, [c2.V] = true })
  if not u then return sites end
  local names = { c1.V, c2.V }
  table.sort(names)
  local dir = axis[u] == "y" and "apply" or "undo"
  sites[1] = support.site(T, unit, fn, {
    direction = dir, key = fn:name() .. ":" .. table.concat(names, ","), line = d1.line,
    decls = { d1, d2 }, launch = launch, unit_stride = u,
    check = string.format("the stores' unit-stride index %s comes from threadIdx.%s; %s and %s are the only thread indices and the launch is 2-D",
      u, axis[u], c1.V, c2.V),
  })
  return sites
end

local function swap(site, direction)
  local ok, f = support.same_unit(site, T, direction)
  if not ok then return nil, f end
  if site.linear then return support.edit(site, linear.edits(site)) end
  local d1, d2, l = site.decls[1], site.decls[2], site.launch
  return support.edit(site, {
    { node = d1, text = swap_axes(d2:text()) },
    { node = d2, text = swap_axes(d1:text()) },
    tiling.launch_edit(l, { l.grid[2], l.grid[1] }, { l.block[2], l.block[1] }),
  })
end

function T.apply(site) return swap(site, "apply") end
function T.undo(site) return swap(site, "undo") end

return T
