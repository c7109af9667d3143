-- Bitmask duplicate culling (bfs v4 -> v5): a neighbour u is claimed by a
-- test-and-set on a visited bitmask (one bit per vertex, V / 8 bytes that
-- stay in L2) after a plain read of its word, instead of an atomicCAS on
-- its 4-byte level, so most visited neighbours cost a cached load, no atomic.
--
-- Apply: every statement `if (atomicCAS(&L[u], -1, D + 1) == -1) Q[atomicAdd(&C[0], 1)] = u;`
-- becomes `visit(u, D, bits, L, Q, C);` (claim and visit are added after
-- the init kernel), and the init kernel, which sets `L[v] = v == 0 ? 0 :
-- -1` for v < V with a grid of cdiv(V, B) threads, also sets bits[v] for v <
-- (V + 31) / 32 (only vertex 0 visited). The check: L is written nowhere
-- else (so "bit set" and "level != -1" stay the same fact), each kernel has
-- an `unsigned *` parameter of one name that it does not use yet. Its size
-- (cdiv(V, 32) words) is the workload's, as the lineage's buffers give it:
-- no kernel text can show it.
-- Undo: the reverse, when claim and visit have exactly the bodies apply
-- writes, and bits is read nowhere but in them, the visit calls and the init line.
local support = require "klineage.transforms.support"
local L = require "klineage.transforms.lib.grid_loops"

local T = {
  name = "bitmask_frontier",
  intent = "claim BFS neighbours with a test-and-set on a visited bitmask after a plain cached read, instead of an atomicCAS on each neighbour's level",
}

-- The code of s without comments or blanks.
local function code(s) return L.norm((s:gsub("//[^\n]*", ""):gsub("/%*.-%*/", ""))) end

local CAS = "^if%(atomicCAS%(&([%a_][%w_]*)%[([%a_][%w_]*)%],%-1,([%a_][%w_]*)%+1%)==%-1%)([%a_][%w_]*)%[atomicAdd%(&([%a_][%w_]*)%[0%],1%)%]=([%a_][%w_]*);$"
local INIT_LEVEL = "^if%(([%a_][%w_]*)<([%a_][%w_]*)%)([%a_][%w_]*)%[([%a_][%w_]*)%]=([%a_][%w_]*)==0%?0:%-1;$"

local function claim_code(B, U, M)
  return string.format("{unsigned%s=1u<<(%s%%32);if(%s[%s/32]&%s)returnfalse;return(atomicOr(&%s[%s/32],%s)&%s)==0;}",
    M, U, B, U, M, B, U, M, M)
end

local function visit_code(claim, p)
  return string.format("{if(%s(%s,%s)){%s[%s]=%s+1;%s[atomicAdd(&%s[0],1)]=%s;}}", claim, p[3], p[1], p[4], p[1], p[2], p[5], p[6], p[1])
end

local function fn_named(unit, name)
  for _, g in ipairs(support.functions(unit)) do if g:name() == name then return g end end
end

local function bits_param(fn)
  for _, p in ipairs(fn:params()) do
    if p.pointer_depth == 1 and p.base_span and L.norm(p.base_span.text) == "unsigned" then return p.name end
  end
end

-- The init kernel: its level statement and thread index v.
local function init_kernel(unit)
  for _, fn in ipairs(support.functions(unit, { global = true })) do
    local stmts = L.statements(fn:body())
    local d = stmts[1] and stmts[1].kind == "decl_stmt" and L.single_decl(stmts[1])
    local launch = L.launch(unit, fn)
    local B = d and launch and L.thread_index(d.value:text(), launch.block.text)
    for _, st in ipairs(stmts) do
      local v, V, lv, v2, v3 = code(st:text()):match(INIT_LEVEL)
      if B and v and v == d.name and v2 == v and v3 == v
          and L.norm(launch.grid.text) == "cdiv(" .. V .. "," .. L.norm(launch.block.text) .. ")" then
        return { fn = fn, stmt = st, v = v, V = V, level = lv, stmts = stmts }
      end
    end
  end
end

-- The uses of `name` (an identifier) in unit outside the given statements.
local function writes_level(unit, level, allowed)
  for id in unit:walk({ "ident" }) do
    if id:text() == level then
      local p = id:parent()
      local ok = false
      for _, a in ipairs(allowed) do
        local b, e = L.span(a)
        local ib = L.span(id)
        if ib >= b and ib <= e then ok = true end
      end
      if not ok and p and p.kind == "index" then
        local q = p:parent()
        if q and ((q.kind == "assign" and q:field("lhs").id == p.id) or (q.kind == "unary" and q.op == "&")
            or ((q.kind == "unary" or q.kind == "postfix") and (q.op == "++" or q.op == "--"))) then
          return true
        end
      elseif not ok and p and p.kind ~= "index" and p.kind ~= "param" and p.kind ~= "declarator" then
        return true  -- passed on or aliased: it may be written anywhere
      end
    end
  end
end

local function apply_site(unit)
  if fn_named(unit, "claim") or fn_named(unit, "visit") then return nil end
  local init = init_kernel(unit)
  if not init then return nil end
  local ib = L.span(init.fn:body())
  local cas, names, bits = {}, nil, nil
  for _, fn in ipairs(support.functions(unit, { global = true })) do
    for st in fn:body():walk({ "if" }) do
      local l, u, d, q, c, u2 = code(st:text()):match(CAS)
      if l and u == u2 then
        local key = table.concat({ l, q, c }, ",")
        local b = bits_param(fn)
        if not b or (names and names ~= key) or (bits and bits ~= b) or #support.uses(fn, b) > 0 then return nil end
        if L.span(fn:body()) < ib or l ~= init.level then return nil end
        names, bits = key, b
        cas[#cas + 1] = { node = st, l = l, u = u, d = d, q = q, c = c }
      end
    end
  end
  if #cas == 0 or bits_param(init.fn) ~= bits or #support.uses(init.fn, bits) > 0 then return nil end
  local allowed = { init.stmt }
  for _, x in ipairs(cas) do allowed[#allowed + 1] = x.node end
  if writes_level(unit, init.level, allowed) then return nil end
  return support.site(T, unit, init.fn, { direction = "apply", key = "visited:" .. bits, line = cas[1].node.line,
    check = string.format("%d neighbour claims by atomicCAS on %s, the only writes to it besides %s's init; every kernel has the unused bitmask parameter %s",
      #cas, init.level, init.fn:name(), bits), cas = cas, init = init, bits = bits })
end

local function undo_site(unit)
  local claim, visit = fn_named(unit, "claim"), fn_named(unit, "visit")
  if not claim or not visit then return nil end
  local cp, vp = claim:params(), visit:params()
  if #cp ~= 2 or #vp ~= 6 then return nil end
  local cs = L.statements(claim:body())
  local m = cs[1] and cs[1].kind == "decl_stmt" and L.single_decl(cs[1])
  if not m or code(claim:body():text()) ~= claim_code(cp[1].name, cp[2].name, m.name) then return nil end
  local p = {}
  for k = 1, 6 do p[k] = vp[k].name end
  if code(visit:body():text()) ~= visit_code("claim", p) then return nil end
  local init = init_kernel(unit)
  if not init then return nil end
  local calls, bits = {}, nil
  for _, fn in ipairs(support.functions(unit, { global = true })) do
    for st in fn:body():walk({ "expr_stmt" }) do
      local args = code(st:text()):match("^visit%(([%w_,]+)%);$")
      if args then
        local a = {}
        for x in args:gmatch("[^,]+") do a[#a + 1] = x end
        if #a ~= 6 or (bits and bits ~= a[3]) or a[4] ~= init.level then return nil end
        bits = a[3]
        calls[#calls + 1] = { node = st, a = a, fn = fn }
      end
    end
  end
  if #calls == 0 then return nil end
  -- bits: only the visit calls' argument and the init line read it.
  local bline
  for _, st in ipairs(init.stmts) do
    if code(st:text()) == string.format("if(%s<(%s+31)/32)%s[%s]=%s==0?1u:0u;", init.v, init.V, bits, init.v, init.v) then bline = st end
  end
  if not bline then return nil end
  for _, fn in ipairs(support.functions(unit, { global = true })) do
    local n = 0
    for _, c in ipairs(calls) do if c.fn:name() == fn:name() then n = n + 1 end end
    if fn:name() == init.fn:name() then n = n + 1 end
    if #support.uses(fn, bits) ~= n then return nil end
  end
  for id in unit:walk({ "ident" }) do
    local t = id:text()
    if t == "claim" or t == "visit" then
      local b = L.span(id)
      local cb, ce = L.span(claim)
      local vb, ve = L.span(visit)
      local inside = (b >= cb and b <= ce) or (b >= vb and b <= ve)
      for _, c in ipairs(calls) do local x, y = L.span(c.node) inside = inside or (b >= x and b <= y) end
      if not inside then return nil end
    end
  end
  return support.site(T, unit, init.fn, { direction = "undo", key = "visited:" .. bits, line = calls[1].node.line,
    check = string.format("claim and visit have the test-and-set bodies; %s is read only by them, %d visit calls and %s's init line",
      bits, #calls, init.fn:name()), calls = calls, claim = claim, visit = visit, bline = bline })
end

function T.find(unit)
  local s = apply_site(unit) or undo_site(unit)
  return s and { s } or {}
end

local HELPERS = "\n" .. [[

// Claims u for this level: true for exactly one caller per vertex.
__device__ __forceinline__ bool claim(unsigned *bits, int u) {
  unsigned mask = 1u << (u % 32);
  // A stale read can only miss a bit that is being set; the atomic decides.
  if (bits[u / 32] & mask) return false;
  return (atomicOr(&bits[u / 32], mask) & mask) == 0;
}

// Labels a claimed neighbour and appends it to the next frontier.
__device__ __forceinline__ void visit(int u, int depth, unsigned *bits, int *level, int *qb, int *count) {
  if (claim(bits, u)) {
    level[u] = depth + 1;
    qb[atomicAdd(&count[0], 1)] = u;
  }
}]]

function T.apply(site)
  local ok, f = support.same_unit(site, T, "apply")
  if not ok then return nil, f end
  local text, init = tostring(site.unit), site.init
  local edits = {}
  for _, c in ipairs(site.cas) do
    edits[#edits + 1] = { node = c.node, text = string.format("visit(%s, %s, %s, %s, %s, %s);", c.u, c.d, site.bits, c.l, c.q, c.c) }
  end
  local last = init.stmts[#init.stmts]
  local _, le = L.span(last)
  edits[#edits + 1] = { begin = le + 1, ["end"] = le, text = string.format("\n%sif (%s < (%s + 31) / 32) %s[%s] = %s == 0 ? 1u : 0u;  // only the source is visited",
    L.indent_at(text, (L.span(last))), init.v, init.V, site.bits, init.v, init.v) }
  local _, fe = L.span(init.fn:body())
  edits[#edits + 1] = { begin = fe + 1, ["end"] = fe, text = HELPERS }
  table.sort(edits, function(a, b) return (a.begin or L.span(a.node)) < (b.begin or L.span(b.node)) end)
  return support.edit(site, edits)
end

-- The bytes of function g with the comment lines right above it and the blank line after it.
local function whole(text, g)
  local b, e = L.span(g)
  local s = b
  while true do
    local prev_end = s - 1
    if prev_end < 1 then break end
    local ls = prev_end
    while ls > 1 and text:sub(ls - 1, ls - 1) ~= "\n" do ls = ls - 1 end
    local line = text:sub(ls, prev_end - 1)
    if line:match("^%s*//") then s = ls else break end
  end
  if text:sub(e + 1, e + 2) == "\n\n" then e = e + 2 end
  return s, e
end

function T.undo(site)
  local ok, f = support.same_unit(site, T, "undo")
  if not ok then return nil, f end
  local text = tostring(site.unit)
  local edits = {}
  for _, c in ipairs(site.calls) do
    local a = c.a
    edits[#edits + 1] = { node = c.node, text = string.format("if (atomicCAS(&%s[%s], -1, %s + 1) == -1) %s[atomicAdd(&%s[0], 1)] = %s;",
      a[4], a[1], a[2], a[5], a[6], a[1]) }
  end
  for _, g in ipairs({ site.claim, site.visit }) do
    local b, e = whole(text, g)
    edits[#edits + 1] = { begin = b, ["end"] = e, text = "" }
  end
  edits[#edits + 1] = L.drop_line(site.unit, site.bline)
  table.sort(edits, function(a, b) return (a.begin or L.span(a.node)) < (b.begin or L.span(b.node)) end)
  return support.edit(site, edits)
end

return T
