-- grid_stride_reduce: grid-stride accumulation for a block-sum reduction (Harris's step 7; the general guard-to-loop rewrite is grid_stride.lua): a fixed grid of GRID_BLOCKS
-- blocks walks the whole array, each thread adding many element pairs
-- before the shared-memory tree, so there are only GRID_BLOCKS partials
-- and the tree's cost is spread over many elements.
--
-- Apply: on first_add_on_load's two-element load (lib/redux_load.lua: the
-- load, the shared array only summed, launch grid(cdiv(N, 2 * E))
-- block(E), grid mirrors such as partial_count) it writes the loop
--   unsigned ST = 2 * D * gridDim.x; float V = 0.0f;
--   for (unsigned I = blockIdx.x * (2 * D) + T; I < (unsigned)N; I += ST)
--     { V += X[I]; if (I + D < (unsigned)N) V += X[I + D]; }
-- adds `#define GRID_BLOCKS G` (params), and makes the launch line and the
-- mirrors min(GRID_BLOCKS, the old grid): never more blocks, so never more
-- partials, than the kernel wrote before (the lineage's v6 writes the bare
-- GRID_BLOCKS and relies on its partial buffer's 4096 spare slots, which a
-- transform cannot see).
-- Undo: that loop exactly (T threadIdx.x or its variable), ST and I used
-- nowhere else, gridDim only there, the launch grid(G) or the min form, G
-- a #define used only by the launch line and by mirrors `return G;` (or
-- the min form); the one-block-pair load comes back, the grid is
-- cdiv(N, 2 * E) again, and G's #define goes.
local support = require "klineage.transforms.support"
local verdicts = require "klineage.base.verdicts"
local R = require "klineage.transforms.lib.redux"
local L = require "klineage.transforms.lib.redux_load"

local T = {
  name = "grid_stride_reduce",
  intent = "launch a fixed grid whose threads stride over the whole array, so each adds many elements before one block tree",
  params = { GRID_BLOCKS = { 1056, 528, 2112 } },
}

local ID = "([%a_][%w_]*)"
local G = "GRID_BLOCKS"

-- The undo form at statement k of fn, or nil, why.
local function loop_form(unit, fn, st, k)
  local stv, d = (st[k] and R.norm(st[k]) or ""):match("^unsigned " .. ID .. " = 2 %* ([%w_%.]+) %* gridDim%.x;$")
  if not stv or not (d == "blockDim.x" or d:match("^[%a_][%w_]*$")) then return nil end
  local v = (st[k + 1] and R.norm(st[k + 1]) or ""):match("^float " .. ID .. " = 0%.0f;$")
  local loop = st[k + 2]
  if not v or not loop or loop.kind ~= "for" then return nil end
  local i, t, n = R.norm(loop):match("^for %(unsigned " .. ID .. " = blockIdx%.x %* %(2 %* [%w_%.]+%) %+ ([%w_%.]+); [%a_][%w_]* < %(unsigned%)" .. ID .. ";")
  if not i then return nil end
  local tid = R.tid_name(fn)
  if t ~= "threadIdx.x" and t ~= tid then return nil end
  local x = R.norm(loop):match("{ " .. v .. " %+= " .. ID .. "%[")
  local want = string.format("for (unsigned %s = blockIdx.x * (2 * %s) + %s; %s < (unsigned)%s; %s += %s) { %s += %s[%s]; "
    .. "if (%s + %s < (unsigned)%s) %s += %s[%s + %s]; }", i, d, t, i, n, i, stv, v, x, i, i, d, n, v, x, i, d)
  if not x or R.norm(loop) ~= want then return nil end
  local sd, t2 = (st[k + 3] and R.norm(st[k + 3]) or ""):match("^" .. ID .. "%[" .. ID .. "%] = " .. v .. ";$")
  if not sd or t2 ~= tid or not R.shared_decl(fn, sd) then return nil end
  local f = { k = k, st = stv, d = d, v = v, i = i, t = tid, n = n, x = x, sd = sd, last = k + 2, store = st[k + 3] }
  local p
  for _, q in ipairs(fn:params()) do if q.name == n then p = q end end
  if not (p and p.pointer_depth == 0 and R.norm(p.type_span.text) == "int" and R.read_only(fn, n)) then
    return nil, n .. " is not an int parameter the kernel only reads"
  end
  for _, name in ipairs({ stv, i, v }) do
    for _, id in ipairs(R.idents(fn, name)) do
      local inside = false
      for j = k, k + 3 do if R.within(id, st[j]) then inside = true end end
      if not inside then return nil, name .. " is used past the loop" end
    end
  end
  local why = L.only_summed(unit, fn, f, f.store)
  if why then return nil, sd .. ": " .. why end
  for m in fn:body():walk({ "member" }) do
    local mt = R.norm(m)
    if mt:match("^gridDim") and not R.within(m, st[k]) then return nil, "gridDim is used past the stride" end
    if mt == "blockIdx.x" and not R.within(m, loop:field("init")) then
      local ix = m:parent()
      local a = ix and ix.kind == "index" and ix:field("index").id == m.id and ix:parent()
      if not (a and a.kind == "assign" and a.op == "=" and a:field("lhs").id == ix.id) then
        return nil, "blockIdx.x is used at line " .. m.line .. " as more than an output index"
      end
    end
  end
  local l = R.launch(unit, fn:name())
  if not (l and l.block and l.block:match("^[%a_][%w_]*$")) then return nil, "no launch line block(E)" end
  local e = l.block
  if d ~= "blockDim.x" and d ~= e then return nil, "the loop strides by " .. d .. ", the launch says block(" .. e .. ")" end
  local old = string.format("cdiv(%s, 2 * %s)", n, e)
  local g = l.grid:match("^" .. ID .. "$") or l.grid:match("^min%(" .. ID .. ", " .. old:gsub("%p", "%%%0") .. "%)$")
  local gv = g and R.define_int(unit, g)
  if not (gv and gv > 0) then return nil, "the launch grid is not a fixed #define (or its min with " .. old .. ")" end
  -- G may appear only in the launch line and in mirrors of the grid.
  f.mirrors = {}
  for _, h in ipairs(R.functions(unit)) do
    local hs, ps = R.stmts(h), h:params()
    local mirror = false
    if #hs == 1 and #ps == 1 and ps[1].name then
      local q = ps[1].name
      local a = R.norm(hs[1])
      mirror = a == "return " .. g .. ";"
        or a == string.format("return min(%s, (%s + 2 * %s - 1) / (2 * %s));", g, q, e, e)
      if mirror then f.mirrors[#f.mirrors + 1] = { stmt = hs[1], p = q } end
    end
    if not mirror and #R.idents(h, g) > 0 then return nil, h:name() .. " uses " .. g end
  end
  for _, ch in ipairs(unit:root():children()) do
    if ch.kind ~= "function" and ch.kind ~= "preproc" then
      for id in ch:walk({ "ident" }) do if id:text() == g then return nil, g .. " is used at file scope" end end
    end
  end
  for _, dd in ipairs(unit:defines()) do
    if dd.name.text ~= g and dd.value and dd.value.text:find("%f[%w_]" .. g .. "%f[^%w_]") then
      return nil, "#define " .. dd.name.text .. " uses " .. g
    end
  end
  f.e, f.g, f.gv, f.launch, f.loop = e, g, gv, l, loop
  return f
end

local function check(unit, fn)
  local st = R.stmts(fn)
  for k = 1, #st do
    local f, why = loop_form(unit, fn, st, k)
    if f then f.direction = "undo" return f end
    if why then return nil, why end
  end
  local f = L.check(unit, fn)
  if f and f.two then
    if unit:has_word(G) then return nil, "the name " .. G .. " is taken" end
    f.direction = "apply"
    return f
  end
end

function T.find(unit)
  local sites = {}
  for _, fn in ipairs(support.functions(unit, { global = true })) do
    local f = check(unit, fn)
    if f then
      sites[#sites + 1] = support.site(T, unit, fn, { direction = f.direction, key = fn:name(), form = f,
        line = R.stmts(fn)[f.k].line, params = f.direction == "undo" and { GRID_BLOCKS = f.gv } or nil,
        check = f.direction == "apply"
          and string.format("%s loads two elements a block apart into %s, only summed; grid(%s)", fn:name(), f.sd, f.launch.grid)
          or string.format("%s strides a fixed grid of %s = %d blocks over %s elements into %s, only summed", fn:name(), f.g, f.gv, f.n, f.sd) })
    end
  end
  return sites
end

local function refind(site, direction)
  local ok, f0 = support.same_unit(site, T, direction)
  if not ok then return nil, f0 end
  local fn = R.function_named(site.unit, site.fn)
  local f = fn and check(site.unit, fn)
  if not f or f.direction ~= direction then return support.refuse(site, "the load is no longer in the form this site found") end
  return f, fn
end

function T.apply(site, params)
  local f, fn = refind(site, "apply")
  if not f then return nil, fn end
  local gv = params and params.GRID_BLOCKS or T.params.GRID_BLOCKS[1]
  if math.type(gv) ~= "integer" or gv < 1 or gv > 65535 then
    return nil, verdicts.failure("bad_input", "grid_stride_reduce: GRID_BLOCKS must be an integer in 1..65535")
  end
  local unit = site.unit
  local st = R.stmts(fn)
  local ind = R.indent(unit, st[f.k])
  local e, n, d, i, v = f.e, f.n, f.d, f.i, f.v
  local stride = R.fresh_in(unit, fn, "stride")
  local kb = R.span(st[f.k])
  local cb, _, ctext = R.comment_above(unit, kb)
  local b = (cb and ctext:lower():find("first add", 1, true)) and cb or kb
  local _, le = R.span(st[f.last - 1])
  local edef = unit:define(e)
  local old = string.format("cdiv(%s, 2 * %s)", n, e)
  local edits = {
    { begin = edef.line["end"] + 1, ["end"] = edef.line["end"], text = string.format("#define %s %d  // %s\n", G, gv,
      gv == 1056 and "8 resident blocks of BLOCK threads on each of the H200's 132 SMs" or "blocks of the fixed grid") },
    { begin = f.launch.grid_b, ["end"] = f.launch.grid_e, text = string.format("min(%s, %s)", G, old) },
    { begin = b, ["end"] = le, text = string.format("%s// A fixed grid walks the whole array: each thread adds many elements.\n"
      .. "%sunsigned %s = 2 * %s * gridDim.x;\n%sfloat %s = 0.0f;\n%sfor (unsigned %s = blockIdx.x * (2 * %s) + %s; %s < (unsigned)%s; %s += %s) {\n"
      .. "%s  %s += %s[%s];\n%s  if (%s + %s < (unsigned)%s) %s += %s[%s + %s];\n%s}",
      b == kb and "" or ind, ind, stride, d, ind, v, ind, i, d, f.t, i, n, i, stride, ind, v, f.x, i, ind, i, d, n, v, f.x, i, d, ind) },
  }
  for _, m in ipairs(f.mirrors) do
    edits[#edits + 1] = { node = m.stmt, text = string.format("return min(%s, (%s + 2 * %s - 1) / (2 * %s));", G, m.p, e, e) }
  end
  return support.edit(site, edits)
end

function T.undo(site)
  local f, fn = refind(site, "undo")
  if not f then return nil, fn end
  local unit = site.unit
  local st = R.stmts(fn)
  local ind = R.indent(unit, st[f.k])
  local kb = R.span(st[f.k])
  local cb, _, ctext = R.comment_above(unit, kb)
  local b = (cb and ctext:lower():find("grid", 1, true)) and cb or kb
  local _, le = R.span(st[f.last])
  local e, n, d, i, v, x = f.e, f.n, f.d, f.i, f.v, f.x
  local gdef = unit:define(f.g)
  local edits = {
    { begin = gdef.line.begin, ["end"] = gdef.line["end"], text = "" },
    { begin = f.launch.grid_b, ["end"] = f.launch.grid_e, text = string.format("cdiv(%s, 2 * %s)", n, e) },
    { begin = b, ["end"] = le, text = string.format("%s// Each block covers 2 * %s elements; the first add happens here.\n"
      .. "%sunsigned %s = blockIdx.x * (%s * 2) + threadIdx.x;\n%sfloat %s = %s < (unsigned)%s ? %s[%s] : 0.0f;\n"
      .. "%sif (%s + %s < (unsigned)%s) %s += %s[%s + %s];",
      b == kb and "" or ind, d, ind, i, d, ind, v, i, n, x, i, ind, i, d, n, v, x, i, d) },
  }
  for _, m in ipairs(f.mirrors) do
    edits[#edits + 1] = { node = m.stmt, text = string.format("return (%s + 2 * %s - 1) / (2 * %s);", m.p, e, e) }
  end
  return support.edit(site, edits)
end

return T
