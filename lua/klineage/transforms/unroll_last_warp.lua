-- Unroll the last warp (Harris's step 5): the shared-memory tree's
-- __syncthreads loop stops at 64 elements and warp 0 finishes the last six
-- steps alone, each read and write ordered by __syncwarp (the correct form
-- since Volta of the old volatile, barrier-free code), saving six
-- block-wide barriers.
--
-- The static check (lib/redux.lua, tree_at): the lineage's sum tree,
--   __syncthreads(); for (S = C / 2; S > 0; S >>= 1) { if (T < S) SD[T] +=
--   SD[T + S]; __syncthreads(); }  if (T == 0) OUT = SD[0];
-- with T = threadIdx.x, SD a __shared__ float array of size E that nothing
-- after the read-out uses (only thread 0 reads the result, so warp 0's
-- last write needs no block barrier), C = E or blockDim.x with the launch
-- line's block(E), E a power of two from 64 (warp 0 reads SD[T + 32]) to
-- 1024, and no return before the tree (warp 0 must have all 32 lanes for
-- the full-mask __syncwarp). Undo needs the loop to stop at S > 32 followed by
-- `if (T < 32) warp_reduce(SD, T);` with warp_reduce exactly the lineage's
-- helper. A helper name taken by anything else is refused. The
-- static_assert the lineage keeps next to the tree (power of two, >= 32
-- or >= 64) follows the helper: written when it is added, reverted when
-- undo removes its last call.
local support = require "klineage.transforms.support"
local R = require "klineage.transforms.lib.redux"

local T = {
  name = "unroll_last_warp",
  intent = "finish the last six steps of a shared-memory tree in warp 0 ordered by __syncwarp, saving six block-wide barriers",
}

local HELPER = "warp_reduce"

local function check(unit, fn, st, k)
  local f = R.tree_at(unit, fn, st, k)
  if not f then return nil end
  local e, v = R.block_constant(unit, fn, f.c)
  if not e then return nil, v end
  if not (R.is_pow2(v) and v >= 64 and v <= 1024) then return nil, e .. " = " .. v .. " is not a power of two in 64..1024" end
  local _, size = R.shared_decl(fn, f.sd)
  if size ~= e then return nil, f.sd .. " is not sized " .. e end
  f.e = e
  if R.returns_before(fn, f.loop) then return nil, "a return before the tree may leave warp 0 short of lanes" end
  if f.stop == 0 then
    -- apply: the helper must be ours (or absent) and defined before fn.
    local h = R.function_named(unit, HELPER)
    if h then
      if not R.is_warp_reduce(h) then return nil, HELPER .. " is some other function" end
      if R.span(h) > R.span(fn) then return nil, HELPER .. " is defined after " .. fn:name() end
      f.helper = h
    elseif unit:has_word(HELPER) then
      return nil, "the name " .. HELPER .. " is taken"
    end
  end
  return f
end

local function scan(unit, fn)
  local out = {}
  local st = R.stmts(fn)
  for k = 1, #st do
    local f = check(unit, fn, st, k)
    if f then out[#out + 1] = f end
  end
  return out
end

function T.find(unit)
  local sites = {}
  for _, fn in ipairs(support.functions(unit, { global = true })) do
    for _, f in ipairs(scan(unit, fn)) do
      sites[#sites + 1] = support.site(T, unit, fn, { direction = f.stop == 0 and "apply" or "undo",
        key = fn:name() .. ":" .. f.sd, form = f, line = f.loop.line,
        check = string.format("sum tree over __shared__ %s[%s] (%s = %d, a power of two >= 64) read out by thread 0 only%s",
          f.sd, f.e, f.e, R.define_int(unit, f.e), f.stop == 32 and ", last warp by " .. HELPER or "") })
    end
  end
  return sites
end

-- The site's tree again in its own unit (the site may be stale).
local function refind(site, direction)
  local ok, f0 = support.same_unit(site, T, direction)
  if not ok then return nil, f0 end
  local fn = R.function_named(site.unit, site.fn)
  for _, f in ipairs(fn and scan(site.unit, fn) or {}) do
    if site.key == site.fn .. ":" .. f.sd and (f.stop == 0) == (direction == "apply") then return f, fn end
  end
  return support.refuse(site, "the tree is no longer in the form this site found")
end

function T.apply(site)
  local f, fn = refind(site, "apply")
  if not f then return nil, fn end
  local unit = site.unit
  local ind = R.indent(unit, f.loop)
  local _, le = R.span(f.loop)
  local edits = {
    { node = f.loop:field("cond"), text = f.s .. " > 32" },
    { begin = le + 1, ["end"] = le, text = string.format("\n%sif (%s < 32) %s(%s, %s);", ind, f.t, HELPER, f.sd, f.t) },
  }
  if not f.helper then
    local at = R.before_function(unit, fn)
    table.insert(edits, 1, { begin = at, ["end"] = at - 1, text = R.WARP_REDUCE_TEXT })
    local a = R.top_stmt(unit, R.assert_tree(f.e))
    if a then table.insert(edits, 1, { node = a, text = R.assert_warp(f.e) }) end
  end
  return support.edit(site, edits)
end

function T.undo(site)
  local f, fn = refind(site, "undo")
  if not f then return nil, fn end
  local unit = site.unit
  local del = R.delete_lines(unit, f.warp)
  if not del then return support.refuse(site, "the warp_reduce call shares its line") end
  local edits = { { node = f.loop:field("cond"), text = f.s .. " > 0" }, del }
  if #R.calls(unit, HELPER) == 1 then
    -- Its last call goes: the helper and the >= 64 requirement go too.
    table.insert(edits, 1, R.delete_function(unit, f.helper))
    local a = R.top_stmt(unit, R.assert_warp(f.e))
    if a then table.insert(edits, 1, { node = a, text = R.assert_tree(f.e) }) end
  end
  return support.edit(site, edits)
end

return T
