-- First add during the load (Harris's step 4): each thread loads two
-- elements a block apart and adds them before the shared-memory tree, so
-- half as many blocks run and no thread idles in the first tree step.
--
-- The static check, on the reduction lineage's exact idiom (v2 <-> v3):
--   unsigned I = blockIdx.x * D + threadIdx.x;
--   SD[T] = I < (unsigned)N ? X[I] : 0.0f;           (apply)
-- or its two-element form (undo, D*2 in the index, `float V = ...; if (I +
-- D < (unsigned)N) V += X[I + D]; SD[T] = V;`), where D is blockDim.x or
-- the launch's block constant E, T = threadIdx.x, N an int parameter never
-- written; I and V appear nowhere else; the kernel's launch line is
-- grid(cdiv(N, E)) (grid(cdiv(N, 2 * E))) block(E); the shared array SD is
-- only combined by `+=` (tree steps, the lineage's warp_reduce) and read
-- as SD[0] into P[blockIdx.x] (so the block's result is a sum, which the
-- pairing keeps); blockIdx.x is otherwise only such an output index and
-- gridDim is not used. The rest of the file may know the grid only through
-- a function returning exactly (P + E - 1) / E (the lineage's
-- partial_count), which the edit rewrites with the launch line; any other
-- division by E elsewhere is refused.
local support = require "klineage.transforms.support"
local R = require "klineage.transforms.lib.redux"
local L = require "klineage.transforms.lib.redux_load"

local T = {
  name = "first_add_on_load",
  intent = "add two elements a block apart while loading, so the reduction runs half the blocks and no thread idles in the first tree step",
}

local check = L.check

function T.find(unit)
  local sites = {}
  for _, fn in ipairs(support.functions(unit, { global = true })) do
    local f = check(unit, fn)
    if f then
      sites[#sites + 1] = support.site(T, unit, fn, { direction = f.two and "undo" or "apply", key = fn:name(),
        form = f, line = R.stmts(fn)[f.k].line,
        check = string.format("%s loads %s into %s[%s] with grid(%s), block(%s); %s is only summed and read at [0]",
          fn:name(), f.two and "two elements a block apart" or "one element", f.sd, f.t, f.launch.grid, f.e, f.sd) })
    end
  end
  return sites
end

local function edit(site, two)
  local ok, f0 = support.same_unit(site, T, two and "apply" or "undo")
  if not ok then return nil, f0 end
  local unit = site.unit
  local fn = R.function_named(unit, site.fn)
  local f = fn and check(unit, fn)
  if not f or f.two == two then return support.refuse(site, "the load is no longer in the form this site found") end
  local st = R.stmts(fn)
  local ind = R.indent(unit, st[f.k])
  local i, d, e, n = f.i, f.d, f.e, f.n
  local edits = {}
  local kb, ke = R.span(st[f.k])
  local _, lastb = R.span(st[f.last])
  if two then
    local v = R.fresh_in(unit, fn, "v")
    edits[1] = { begin = kb, ["end"] = lastb, text = string.format(
      "// Each block covers 2 * %s elements; the first add happens here.\n%sunsigned %s = blockIdx.x * (%s * 2) + threadIdx.x;\n"
      .. "%sfloat %s = %s < (unsigned)%s ? %s[%s] : 0.0f;\n%sif (%s + %s < (unsigned)%s) %s += %s[%s + %s];\n%s%s[%s] = %s;",
      d, ind, i, d, ind, v, i, n, f.x, i, ind, i, d, n, v, f.x, i, d, ind, f.sd, f.t, v) }
  else
    -- The comment apply wrote (or the lineage's) goes with the first add.
    local cb, _, ctext = R.comment_above(unit, kb)
    local b = (cb and ctext:lower():find("first add", 1, true)) and cb or kb
    edits[1] = { begin = b, ["end"] = lastb, text = string.format(
      "%sunsigned %s = blockIdx.x * %s + threadIdx.x;\n%s%s[%s] = %s < (unsigned)%s ? %s[%s] : 0.0f;",
      b == kb and "" or ind, i, d, ind, f.sd, f.t, i, n, f.x, i) }
  end
  edits[#edits + 1] = { begin = f.launch.grid_b, ["end"] = f.launch.grid_e,
    text = two and string.format("cdiv(%s, 2 * %s)", n, e) or string.format("cdiv(%s, %s)", n, e) }
  for _, m in ipairs(f.mirrors) do
    edits[#edits + 1] = { node = m.stmt, text = two and string.format("return (%s + 2 * %s - 1) / (2 * %s);", m.p, e, e)
      or string.format("return (%s + %s - 1) / %s;", m.p, e, e) }
  end
  return support.edit(site, edits)
end

function T.apply(site) return edit(site, true) end
function T.undo(site) return edit(site, false) end

return T
