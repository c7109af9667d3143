-- Warp-shuffle block reductions: each warp combines its 32 values in
-- registers (__shfl_down_sync / __shfl_xor_sync) and only one value per
-- warp goes through shared memory, replacing the log2(block)-barrier
-- shared-memory tree with one or two barriers and a 32x smaller array.
--
-- Two idioms, both checked to the letter (anything else is refused):
--  * the reduction lineage's kernel tree (v7 <-> v8): lib/redux.lua's
--    tree_at (sum tree over __shared__ SD[E], read out by thread 0 only,
--    E the launch's block constant, a power of two 32..1024), fed by
--    `SD[T] = V;` with V a float local of the kernel; SD is used nowhere
--    else, and no return comes before (full-mask shuffles need every lane). Apply writes warp sums, one slot per warp (`WS[E / 32]`), and a
--    second warp sum in warp 0; undo (the exact v8 shape) writes the full
--    tree back over `SD[E]`, unrolled (E is a compile-time constant).
--  * the softmax lineage's block_max / block_sum helpers (v1 <-> v2), see
--    lib/redux_softmax.lua: one site for all of a unit's helpers at once,
--    since the tree form protects its buffer with a leading barrier and
--    the shuffle form with a trailing one, and the two cannot be mixed.
-- Helpers (warp_sum, warp_max) are added when missing and removed with
-- their last call; a name taken by anything else is refused.
local support = require "klineage.transforms.support"
local R = require "klineage.transforms.lib.redux"
local S = require "klineage.transforms.lib.redux_softmax"

local T = {
  name = "warp_shuffle",
  intent = "reduce each warp with shuffles and pass one value per warp through shared memory, replacing the barrier-per-step shared-memory tree",
}

local ID = "([%a_][%w_]*)"

local WARP_SUM_TEXT = [[
// Tree sum across the 32 lanes of a warp; lane 0 ends with the total.
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

]]

-- Whether V is a float local declared among fn's statements.
local function float_local(fn, v)
  for _, st in ipairs(R.stmts(fn)) do
    if st.kind == "decl_stmt" and R.norm(st):match("^float " .. v .. "[ ;=]") then return true end
  end
  return false
end

-- Every use of `name` in fn lies in statements a..b or in `decl`.
local function confined(fn, name, st, a, b, decl)
  for _, id in ipairs(R.idents(fn, name)) do
    local ok = decl and R.within(id, decl)
    for j = a, b do if R.within(id, st[j]) then ok = true end end
    if not ok then return false end
  end
  return true
end

-- The tree form (apply) at statement k of fn.
local function tree_form(unit, fn, st, k)
  local f = R.tree_at(unit, fn, st, k)
  if not f then return nil end
  local j = k - 1
  while st[j] and st[j].kind == "pragma" do j = j - 1 end
  local v = st[j - 1] and R.norm(st[j - 1]):match("^" .. f.sd .. "%[" .. f.t .. "%] = " .. ID .. ";$")
  if not v or not float_local(fn, v) then return nil end
  local e, val = R.block_constant(unit, fn, f.c)
  if not (e and R.is_pow2(val) and val >= 32 and val <= 1024) then return nil end
  local decl, size = R.shared_decl(fn, f.sd)
  if size ~= e or not confined(fn, f.sd, st, j - 1, f.k_out, decl) then return nil end
  if R.returns_before(fn, st[j - 1]) then return nil end
  f.v, f.e, f.first, f.decl = v, e, j - 1, decl
  return f
end

-- The shuffle form (undo) at statement k of fn.
local function shuffle_form(unit, fn, st, k)
  local v, w = (st[k] and R.norm(st[k]) or ""):match("^" .. ID .. " = " .. ID .. "%(" .. "([%a_][%w_]*)%);$")
  if not v then return nil end
  local a = { R.norm(st[k]):match("^" .. ID .. " = " .. ID .. "%(" .. ID .. "%);$") }
  if a[3] ~= a[1] then return nil end
  local t = R.tid_name(fn)
  local ws = t and (st[k + 1] and R.norm(st[k + 1]) or ""):match("^if %(" .. t .. " %% 32 == 0%) " .. ID .. "%[" .. t .. " / 32%] = " .. v .. ";$")
  if not ws or not st[k + 2] or R.norm(st[k + 2]) ~= "__syncthreads();" or not st[k + 3] then return nil end
  local e, out = R.norm(st[k + 3]):match("^if %(" .. t .. " < 32%) { " .. v .. " = " .. t .. " < " .. ID .. " / 32 %? "
    .. ws .. "%[" .. t .. "%] : 0%.0f; " .. v .. " = " .. w .. "%(" .. v .. "%); if %(" .. t .. " == 0%) (.-) = " .. v .. "; }$")
  if not e or out:find(ws, 1, true) then return nil end
  local h = R.function_named(unit, w)
  if not (h and R.warp_op(h) == "sum" and float_local(fn, v)) then return nil end
  local ce, val = R.block_constant(unit, fn, e)
  if not (ce and R.is_pow2(val) and val >= 32 and val <= 1024) then return nil end
  local decl, size = R.shared_decl(fn, ws)
  if not decl or size ~= e .. " / 32" or not confined(fn, ws, st, k, k + 3, decl) then return nil end
  return { v = v, w = w, helper = h, t = t, ws = ws, e = e, out = out, first = k, last = k + 3, decl = decl }
end

local function scan(unit, fn)
  local out = {}
  local st = R.stmts(fn)
  for k = 1, #st do
    local f = tree_form(unit, fn, st, k)
    if f then f.direction = "apply" else
      f = shuffle_form(unit, fn, st, k)
      if f then f.direction = "undo" end
    end
    if f then out[#out + 1] = f end
  end
  return out
end

function T.find(unit)
  local sites = {}
  for _, fn in ipairs(support.functions(unit, { global = true })) do
    for _, f in ipairs(scan(unit, fn)) do
      sites[#sites + 1] = support.site(T, unit, fn, { direction = f.direction, key = fn:name() .. ":" .. f.v, form = f,
        line = R.stmts(fn)[f.first].line,
        check = f.direction == "apply"
          and string.format("%s[%s] = %s feeds a sum tree over __shared__ %s[%s] (a power of two, the launch's block) read out by thread 0 only",
            f.sd, f.t, f.v, f.sd, f.e)
          or string.format("%s is summed by %s in each warp, one slot per warp in %s[%s / 32], then by warp 0", f.v, f.w, f.ws, f.e) })
    end
  end
  for _, s in ipairs(S.find(T, unit)) do sites[#sites + 1] = s end
  return sites
end

local function refind(site, direction)
  local ok, f0 = support.same_unit(site, T, direction)
  if not ok then return nil, f0 end
  local fn = R.function_named(site.unit, site.fn)
  for _, f in ipairs(fn and scan(site.unit, fn) or {}) do
    if site.key == site.fn .. ":" .. f.v and f.direction == direction then return f, fn end
  end
  return support.refuse(site, "the reduction is no longer in the form this site found")
end

function T.apply(site)
  if site.softmax then return S.apply(T, site) end
  local f, fn = refind(site, "apply")
  if not f then return nil, fn end
  local unit = site.unit
  local st = R.stmts(fn)
  local w = "warp_sum"
  local h = R.function_named(unit, w)
  if h and not (R.warp_op(h) == "sum" and R.span(h) < R.span(fn)) then return support.refuse(site, "warp_sum is some other function") end
  if not h and unit:has_word(w) then return support.refuse(site, "the name warp_sum is taken") end
  local ws = R.fresh_in(unit, fn, "warp_sums")
  local ind = R.indent(unit, st[f.first])
  local b = R.span(st[f.first])
  local _, e = R.span(f.out)
  local v, t = f.v, f.t
  local edits = {
    { node = f.decl, text = string.format("__shared__ float %s[%s / 32];", ws, f.e) },
    { begin = b, ["end"] = e, text = table.concat({
      "// Warp sums by shuffles, one shared slot per warp, then warp 0 adds those.",
      string.format("%s%s = %s(%s);", ind, v, w, v),
      string.format("%sif (%s %% 32 == 0) %s[%s / 32] = %s;", ind, t, ws, t, v),
      ind .. "__syncthreads();",
      string.format("%sif (%s < 32) {", ind, t),
      string.format("%s  %s = %s < %s / 32 ? %s[%s] : 0.0f;", ind, v, t, f.e, ws, t),
      string.format("%s  %s = %s(%s);", ind, v, w, v),
      string.format("%s  if (%s == 0) %s = %s;", ind, t, f.out_lhs, v),
      ind .. "}" }, "\n") },
  }
  local gone = f.helper and #R.calls(unit, f.helper:name()) == 1
  if gone then
    -- The warp-synchronous finish loses its last call: it goes, and so
    -- does the >= 64 requirement it brought.
    table.insert(edits, 1, R.delete_function(unit, f.helper))
    local a = R.top_stmt(unit, R.assert_warp(f.e))
    if a then table.insert(edits, 1, { node = a, text = R.assert_tree(f.e) }) end
  end
  if not h then
    local at = R.before_function(unit, fn)
    table.insert(edits, gone and 2 or 1, { begin = at, ["end"] = at - 1, text = WARP_SUM_TEXT })
  end
  return support.edit(site, edits)
end

function T.undo(site)
  if site.softmax then return S.undo(T, site) end
  local f, fn = refind(site, "undo")
  if not f then return nil, fn end
  local unit = site.unit
  local st = R.stmts(fn)
  local sd = R.fresh_in(unit, fn, "sdata")
  local s = R.fresh_in(unit, fn, "s")
  local ind = R.indent(unit, st[f.first])
  local b = R.span(st[f.first])
  local cb, _, ctext = R.comment_above(unit, b)
  if cb and ctext:lower():find("shuffle", 1, true) then b = cb else ind = "" end
  local _, e = R.span(st[f.last])
  local t = f.t
  local edits = {
    { node = f.decl, text = string.format("__shared__ float %s[%s];", sd, f.e) },
    { begin = b, ["end"] = e, text = table.concat({
      string.format("%s%s[%s] = %s;", ind, sd, t, f.v),
      R.indent(unit, st[f.first]) .. "__syncthreads();",
      "#pragma unroll",
      string.format("%sfor (int %s = %s / 2; %s > 0; %s >>= 1) {", R.indent(unit, st[f.first]), s, f.e, s, s),
      string.format("%s  if (%s < %s) %s[%s] += %s[%s + %s];", R.indent(unit, st[f.first]), t, s, sd, t, sd, t, s),
      R.indent(unit, st[f.first]) .. "  __syncthreads();",
      R.indent(unit, st[f.first]) .. "}",
      string.format("%sif (%s == 0) %s = %s[0];", R.indent(unit, st[f.first]), t, f.out, sd) }, "\n") },
  }
  if #R.calls(unit, f.w) == 2 then table.insert(edits, 1, R.delete_function(unit, f.helper)) end
  return support.edit(site, edits)
end

return T
