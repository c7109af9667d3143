-- While-while BVH traversal (Aila & Laine 2009): instead of one loop whose
-- every trip pops one entry and handles it as an inner node or a leaf
-- (if-if: the lanes of a warp alternate between the two branches), an
-- inner loop descends through inner nodes until the lane holds a leaf,
-- following a hit child directly instead of through the stack, and a
-- second loop tests leaves; lanes then run node steps and leaf tests together.
--
-- The static check is the exact shape of the two forms, on the top-level
-- statements of a function (entries: inner nodes >= 0, leaves < 0):
--   if-if:   S[SP++] = ROOT;
--            while (SP > 0) { int E = S[--SP];
--              if (E >= 0) { DECLS... CALL; if (T1 < BIG) S[SP++] = C1;
--                                           if (T0 < BIG) S[SP++] = C0; }
--              if (E < 0) LEAF }
--   while-while: S[SP++] = DONE; int E = ROOT;
--            while (E != DONE) { while (E >= 0 && E != DONE) { DECLS... CALL;
--              if (T0 < BIG && T1 < BIG) { S[SP++] = C1; E = C0; }
--              else if (T0 < BIG) E = C0; else if (T1 < BIG) E = C1;
--              else E = S[--SP]; }
--              while (E < 0) { LEAF; E = S[--SP]; } }
-- and DECLS, CALL and LEAF neither write E or SP nor touch S, E is declared
-- once and read nowhere after; BIG is a #define or a literal. Both visit
-- every entry whose box is hit (in another order), so a closest-hit search
-- with ties broken by (t, index) gives the same answer; the stack's depth
-- bound is the same. DONE is a #define (0x7fffffff, added by apply): no
-- inner node index reaches it. An ordered descent (a swap of C0 and C1
-- first, raytrace v4 on) is not this shape.
local support = require "klineage.transforms.support"
local L = require "klineage.transforms.lib.grid_loops"

local T = {
  name = "while_while",
  intent = "split the if-if BVH traversal loop into a descend-through-inner-nodes loop and a leaf loop, so a warp's lanes run node steps and leaf tests together",
}
local DONE_VALUE = 0x7fffffff

local function esc(s) return (s:gsub("%p", "%%%0")) end

-- nil unless none of `nodes` writes E or SP or names S.
local function clean(nodes, c)
  for _, n in ipairs(nodes) do
    if L.read_only(n, c.E) or L.read_only(n, c.SP) or #L.uses(n, c.S) > 0 then return false end
    local j = L.jumps(n)
    if #j.returns > 0 or j.nested_return or #j.breaks > 0 or #j.continues > 0 then return false end
  end
  return true
end

local function once(fn, E, after)
  local n = 0
  for d in fn:body():walk({ "declarator" }) do if d:field("name") and d:field("name"):text() == E then n = n + 1 end end
  if n ~= 1 then return false end
  for _, st in ipairs(after) do if #L.uses(st, E) > 0 then return false end end
  return true
end

-- The miss distance must be a #define or a literal: the two forms compare
-- against it at the same points, but a variable could change in between.
local function constant(fn, big)
  return big:match("^[%d.]+[fF]?$") or fn.unit:define(big) ~= nil
end

local function push(s) return L.norm(s):match("^([%a_][%w_]*)%[([%a_][%w_]*)%+%+%]=([%w_]+);$") end

local function if_if(fn, stmts, k)
  local S, SP, ROOT = push(stmts[k]:text())
  local w = stmts[k + 1]
  if not S or not w or w.kind ~= "while" or L.norm(w:field("cond"):text()) ~= SP .. ">0" then return nil end
  local b = w:field("body").kind == "compound" and L.statements(w:field("body")) or {}
  local d = #b == 3 and b[1].kind == "decl_stmt" and L.single_decl(b[1])
  if not d or L.norm(d.value:text()) ~= S .. "[--" .. SP .. "]" or L.norm(d.type) ~= "int" then return nil end
  local E = d.name
  local node, leaf = b[2], b[3]
  if node.kind ~= "if" or node:field("else") or L.norm(node:field("cond"):text()) ~= E .. ">=0" then return nil end
  if leaf.kind ~= "if" or leaf:field("else") or L.norm(leaf:field("cond"):text()) ~= E .. "<0" then return nil end
  local inner = node:field("then").kind == "compound" and L.statements(node:field("then")) or {}
  if #inner < 3 then return nil end
  local T1, BIG, C1 = L.norm(inner[#inner - 1]:text()):match("^if%(([%w_]+)<([%w_]+)%)" .. esc(S) .. "%[" .. esc(SP) .. "%+%+%]=([%w_]+);$")
  local T0, BIG0, C0 = L.norm(inner[#inner]:text()):match("^if%(([%w_]+)<([%w_]+)%)" .. esc(S) .. "%[" .. esc(SP) .. "%+%+%]=([%w_]+);$")
  if not T1 or not T0 or BIG ~= BIG0 or T0 == T1 or C0 == C1 or not constant(fn, BIG) then return nil end
  local c = { S = S, SP = SP, ROOT = ROOT, E = E, T0 = T0, T1 = T1, C0 = C0, C1 = C1, BIG = BIG,
    body = { table.unpack(inner, 1, #inner - 2) }, leaf = leaf:field("then"), leaf_if = leaf, first = stmts[k], last = w }
  if not clean(c.body, c) or not clean({ c.leaf }, c) or not once(fn, E, { table.unpack(stmts, k + 2) }) then return nil end
  return c
end

local function chain(c)
  return string.format("if(%s<%s&&%s<%s){%s[%s++]=%s;%s=%s;}elseif(%s<%s){%s=%s;}elseif(%s<%s){%s=%s;}else{%s=%s[--%s];}",
    c.T0, c.BIG, c.T1, c.BIG, c.S, c.SP, c.C1, c.E, c.C0, c.T0, c.BIG, c.E, c.C0, c.T1, c.BIG, c.E, c.C1, c.E, c.S, c.SP)
end

local function while_while(unit, fn, stmts, k)
  local S, SP, DONE = push(stmts[k]:text())
  local d = stmts[k + 1] and stmts[k + 1].kind == "decl_stmt" and L.single_decl(stmts[k + 1])
  local w = stmts[k + 2]
  if not S or not d or L.norm(d.type) ~= "int" or not w or w.kind ~= "while" then return nil end
  local def = unit:define(DONE)
  if not def or def.value.int ~= DONE_VALUE then return nil end
  local E = d.name
  if L.norm(w:field("cond"):text()) ~= E .. "!=" .. DONE then return nil end
  local b = w:field("body").kind == "compound" and L.statements(w:field("body")) or {}
  if #b ~= 2 or b[1].kind ~= "while" or b[2].kind ~= "while" then return nil end
  if L.norm(b[1]:field("cond"):text()) ~= E .. ">=0&&" .. E .. "!=" .. DONE or L.norm(b[2]:field("cond"):text()) ~= E .. "<0" then return nil end
  local inner = b[1]:field("body").kind == "compound" and L.statements(b[1]:field("body")) or {}
  local lb = b[2]:field("body").kind == "compound" and L.statements(b[2]:field("body")) or {}
  if #inner < 2 or #lb ~= 2 or L.norm(lb[2]:text()) ~= E .. "=" .. S .. "[--" .. SP .. "];" then return nil end
  local n = L.norm(inner[#inner]:text())
  local T0, BIG, T1, BIG1, C1, C0 = n:match("^if%(([%w_]+)<([%w_]+)&&([%w_]+)<([%w_]+)%){" .. esc(S) .. "%[" .. esc(SP)
    .. "%+%+%]=([%w_]+);" .. esc(E) .. "=([%w_]+);}")
  if not T0 or BIG ~= BIG1 or T0 == T1 or C0 == C1 or not constant(fn, BIG) then return nil end
  local c = { S = S, SP = SP, ROOT = L.norm(d.value:text()), E = E, T0 = T0, T1 = T1, C0 = C0, C1 = C1, BIG = BIG,
    DONE = DONE, body = { table.unpack(inner, 1, #inner - 1) }, leaf = lb[1], first = stmts[k], last = w }
  if n ~= chain(c) or not c.ROOT:match("^[%w_]+$") then return nil end
  if not clean(c.body, c) or not clean({ c.leaf }, c) or not once(fn, E, { table.unpack(stmts, k + 3) }) then return nil end
  return c
end

function T.find(unit)
  local sites = {}
  for _, fn in ipairs(support.functions(unit)) do
    local stmts = L.statements(fn:body())
    for k = 1, #stmts do
      local c = if_if(fn, stmts, k)
      local dir = "apply"
      if not c then c, dir = while_while(unit, fn, stmts, k), "undo" end
      if c then
        sites[#sites + 1] = support.site(T, unit, fn, { direction = dir, key = fn:name() .. ":" .. c.E, line = stmts[k].line,
          check = string.format("the %s traversal of stack %s over entry %s (inner >= 0, leaves < 0) has exactly the recognized shape; its node and leaf code leave %s, %s and %s alone",
            dir == "apply" and "if-if" or "while-while", c.S, c.E, c.E, c.SP, c.S), c = c })
      end
    end
  end
  return sites
end

-- The text of statements `list` moved to indentation `ind`.
local function block(text, list, ind)
  local b = L.span(list[1])
  local _, e = L.span(list[#list])
  return ind .. L.shift(text:sub(b, e), #ind - #L.indent_at(text, b))
end

local function stmt_text(text, n, ind, base)
  local b, e = L.span(n)
  return L.shift(text:sub(b, e), #ind - #base)
end

function T.apply(site)
  local ok, f = support.same_unit(site, T, "apply")
  if not ok then return nil, f end
  local c, unit = site.c, site.unit
  local text = tostring(unit)
  local b = L.span(c.first)
  local _, e = L.span(c.last)
  local i = L.indent_at(text, b)
  local i2, i3 = i .. "  ", i .. "    "
  local DONE = "DONE"
  local edits = {}
  local def = unit:define(DONE)
  if def and def.value.int ~= DONE_VALUE then return support.refuse(site, "DONE is defined to another value") end
  if not def then
    for id in unit:walk({ "ident" }) do
      if id:text() == DONE then return support.refuse(site, "the name DONE is taken") end
    end
    local first = unit:defines()[1]
    local add = L.add_define(unit, "#define DONE 0x7fffffff  // stack sentinel: no inner node has this index", first and first.name.text)
    if not add then return support.refuse(site, "no place for the DONE sentinel's #define") end
    edits[#edits + 1] = add
  end
  local out = {
    string.format("%s[%s++] = %s;", c.S, c.SP, DONE),
    string.format("%sint %s = %s;  // the root", i, c.E, c.ROOT),
    i .. "// while-while: descend through inner nodes until this lane holds a leaf,",
    i .. "// then test leaves until it holds an inner node again.",
    string.format("%swhile (%s != %s) {", i, c.E, DONE),
    string.format("%swhile (%s >= 0 && %s != %s) {", i2, c.E, c.E, DONE),
  }
  if #c.body > 0 then out[#out + 1] = block(text, c.body, i3) end
  local fmt = { "if (%s < %s && %s < %s) {", "  %s[%s++] = %s;", "  %s = %s;", "} else if (%s < %s) {", "  %s = %s;",
    "} else if (%s < %s) {", "  %s = %s;", "} else {", "  %s = %s[--%s];", "}" }
  local args = { { c.T0, c.BIG, c.T1, c.BIG }, { c.S, c.SP, c.C1 }, { c.E, c.C0 }, { c.T0, c.BIG }, { c.E, c.C0 },
    { c.T1, c.BIG }, { c.E, c.C1 }, {}, { c.E, c.S, c.SP }, {} }
  for j, f0 in ipairs(fmt) do out[#out + 1] = i3 .. string.format(f0, table.unpack(args[j])) end
  out[#out + 1] = i2 .. "}"
  out[#out + 1] = string.format("%swhile (%s < 0) {", i2, c.E)
  out[#out + 1] = i3 .. stmt_text(text, c.leaf, i3, L.indent_at(text, (L.span(c.leaf_if))) .. "  ")
  out[#out + 1] = string.format("%s%s = %s[--%s];", i3, c.E, c.S, c.SP)
  out[#out + 1] = i2 .. "}"
  out[#out + 1] = i .. "}"
  edits[#edits + 1] = { begin = b, ["end"] = e, text = table.concat(out, "\n") }
  table.sort(edits, function(x, y) return x.begin < y.begin end)
  return support.edit(site, edits)
end

function T.undo(site)
  local ok, f = support.same_unit(site, T, "undo")
  if not ok then return nil, f end
  local c, unit = site.c, site.unit
  local text = tostring(unit)
  local b = L.span(c.first)
  local _, e = L.span(c.last)
  local i = L.indent_at(text, b)
  local i2, i3 = i .. "  ", i .. "    "
  local out = {
    string.format("%s[%s++] = %s;  // the root", c.S, c.SP, c.ROOT),
    i .. "// if-if: each trip handles one entry, an inner node or a leaf, whichever",
    i .. "// this lane popped; lanes of a warp alternate between the two branches.",
    string.format("%swhile (%s > 0) {", i, c.SP),
    string.format("%sint %s = %s[--%s];", i2, c.E, c.S, c.SP),
    string.format("%sif (%s >= 0) {", i2, c.E),
  }
  if #c.body > 0 then out[#out + 1] = block(text, c.body, i3) end
  out[#out + 1] = string.format("%sif (%s < %s) %s[%s++] = %s;", i3, c.T1, c.BIG, c.S, c.SP, c.C1)
  out[#out + 1] = string.format("%sif (%s < %s) %s[%s++] = %s;", i3, c.T0, c.BIG, c.S, c.SP, c.C0)
  out[#out + 1] = i2 .. "}"
  out[#out + 1] = string.format("%sif (%s < 0) %s", i2, c.E, stmt_text(text, c.leaf, i2, L.indent_at(text, (L.span(c.leaf)))))
  out[#out + 1] = i .. "}"
  local edits = { { begin = b, ["end"] = e, text = table.concat(out, "\n") } }
  local drop = L.drop_define(unit, c.DONE, b, e)
  if drop then edits[#edits + 1] = drop end
  table.sort(edits, function(x, y) return x.begin < y.begin end)
  return support.edit(site, edits)
end

return T
