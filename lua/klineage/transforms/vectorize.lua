-- float4 loads and stores along a row: one 16-byte access moves four
-- floats, a quarter of the memory instructions of scalar ones.
--
-- The one idiom handled (softmax v3 <-> v4): in a function's top block,
-- loops `for (int c = S; c < N; c += STEP) STMT` that are block- or
-- grid-stride (S = threadIdx.x [+ blockIdx.x * B], STEP = B [* gridDim.x],
-- B = blockDim.x or the launch line's block x: the threads' elements then
-- partition the row, in float4 units too), N an int parameter the
-- function never writes, and STMT one statement that uses c only as R[c]
-- (reads of one float pointer R) and possibly as the target of `W[c] = E`
-- (an elementwise store, E calling only math functions). A store keeps
-- each element's result; any other statement (a call of a function of the
-- file or an atomic, `v += E`, `v = fmaxf(v, E)`, E free of v, math calls
-- only) is an accumulation, repeated for the four floats: each element is still taken once, by another thread and in another
-- order, which changes nothing up to the order of the kernel's combine.
-- Alignment: R and W are pointer parameters (allocations are 16-byte
-- aligned) or `T *p = param + X * N`, and the file gets (or has) the line
-- `// @kl requires N % 4 == 0`: no tail is needed and no size is assumed
-- without it. Apply writes float4 views R4, W4 and N4 = N >> 2 after the
-- pointers' declarations and turns each loop into
--   for (int c = S; c < N4; c += STEP) { float4 q = R4[c]; STMT(q.x) ... }
-- Undo reads exactly that shape back (the four statements must be the same
-- but for .x .y .z .w, the store one make_float4 of such arguments), drops
-- the views and, when no float4 is left, the requires clause.
local support = require "klineage.transforms.support"
local annotations = require "klineage.workload.annotations"

local T = {
  name = "vectorize",
  intent = "move a row through float4 views so each thread issues one 16-byte access instead of four scalar ones",
}

local COMBINE = { ["+="] = true, ["*="] = true, ["|="] = true, ["&="] = true, ["^="] = true }
local MINMAX = { fmaxf = true, fminf = true, fmax = true, fmin = true, max = true, min = true }
local COMPONENTS = { "x", "y", "z", "w" }
local ATOMIC = { atomicAdd = true, atomicMax = true, atomicMin = true }
local ast = require "klineage.transforms.lib.layout_ast"
local span, is, rewrite, indent_of, close_paren = ast.span, ast.is, ast.rewrite, ast.indent_of, ast.close_paren
local loop_parts, subscripts, written = ast.loop_parts, ast.subscripts, ast.written
local mentions, single_write, pure = ast.mentions, ast.single_write, ast.pure

-- The value of a constant expression in the unit (a #define, a literal), or nil.
local function value_of(unit, text)
  local v = annotations.constants(tostring(unit))[text] or math.tointeger(tonumber(text))
  return v
end

-- The first expression of the block(...) clause of fn's @kl launch line.
local function block_x(unit, fn)
  local own, default
  for _, a in ipairs(unit:annotations()) do
    local kernel, rest = a.text:match("^launch%s*%(%s*([%w_]+)%s*%)(.*)$")
    rest = rest or a.text:match("^launch(.*)$")
    local b = rest and rest:find("block%s*%(")
    if b then
      local i, depth, start = rest:find("%(", b), 0, nil
      start = i + 1
      while i <= #rest do
        local ch = rest:sub(i, i)
        if ch == "(" then depth = depth + 1 elseif ch == ")" then depth = depth - 1 end
        if depth == 0 or (depth == 1 and ch == ",") then break end
        i = i + 1
      end
      local x = rest:sub(start, i - 1):match("^%s*(.-)%s*$")
      if kernel == fn:name() then own = x elseif not kernel then default = x end
    end
  end
  return own or default
end

-- Whether the loop is block- or grid-stride: STEP is the number of threads
-- that share the row, START gives each of them its own first element.
-- Then the threads' elements partition the row in float4 units as well.
local function strided(unit, fn, lp)
  local bx = block_x(unit, fn)
  local function is_block(text)
    return text == "blockDim.x" or (bx and (text == bx or (value_of(unit, text) and value_of(unit, text) == value_of(unit, bx))))
  end
  local by_block
  for _, t in ipairs(lp.start.terms) do
    if t.var == "blockIdx.x" then
      by_block = (#t.syms == 1 and t.syms[1] == "blockDim.x" and tostring(t.coef) == "1")
        or (#t.syms == 0 and bx and value_of(unit, bx) == math.tointeger(tonumber(tostring(t.coef))))
      if not by_block then return false end
    end
  end
  local step = lp.step:text()
  if by_block == nil then return is_block(step) end
  local a, b = step:match("^(.-)%s*%*%s*(.-)$")
  return a ~= nil and ((b == "gridDim.x" and is_block(a)) or (a == "gridDim.x" and is_block(b)))
end

-- ---------------------------------------------------------------- apply

-- The float pointers of fn whose element 4k starts 16 bytes in when N % 4 == 0.
local function aligned_pointers(fn, N)
  local ptrs = {}
  for _, p in ipairs(fn:params()) do
    if p.pointer_depth == 1 and p.base_span.text == "float" and p.name then ptrs[p.name] = { const = p.const } end
  end
  local params = {}
  for k, v in pairs(ptrs) do params[k] = v end
  for _, st in ipairs(fn:body():children()) do
    local dc = st.kind == "decl_stmt" and st:declaration()
    if dc and dc.base.text == "float" and not dc.shared then
      for _, dd in ipairs(dc.declarators) do
        local init = dd.node:field("value")
        if dd.stars == 1 and init and is(init, "binary") and init.op == "+" and init:field("lhs").kind == "ident"
          and params[init:field("lhs"):text()] and is(init:field("rhs"), "binary") and init:field("rhs").op == "*"
          and is(init:field("rhs"):field("rhs"), "ident", N) then
          ptrs[dd.name.text] = { const = dc.const, decl = st }
        end
      end
    end
  end
  return ptrs
end

-- `v = fmaxf(v, E)` (or fminf, max, min, E first): a running extreme.
local function self_minmax(e)
  if not (is(e, "assign") and e.op == "=" and e:field("lhs").kind == "ident" and is(e:field("rhs"), "call")) then return false end
  local args = e:field("rhs"):children()
  if not (MINMAX[args[1]:text()] and #args == 3) then return false end
  local v = e:field("lhs"):text()
  return is(args[2], "ident", v) or is(args[3], "ident", v)
end

-- The scalar loops of fn bounded by N that the idiom covers.
local function scalar_loops(fn, N, ptrs, defined)
  local out = {}
  for _, st in ipairs(fn:body():children()) do
    local lp = st.kind == "for" and loop_parts(st, fn)
    if lp and lp.bound:text() == N and strided(fn.unit, fn, lp) then
      local body = lp.body
      if body.kind == "compound" and #body:children() == 1 then body = body:children()[1] end
      local subs = body.kind == "expr_stmt" and subscripts(body, lp.c)
      local e = body.kind == "expr_stmt" and body:children()[1]
      if subs and #subs > 0 and e and single_write(e) then
        local store = is(e, "assign") and e.op == "=" and e:field("lhs").kind == "index" and e:field("lhs"):field("index"):text() == lp.c
          and e:field("lhs") or nil
        local reads, read_ptr, ok = {}, nil, true
        for _, s in ipairs(subs) do
          if not (store and s.node.id == store.id) then
            reads[#reads + 1] = s.node
            if read_ptr and read_ptr ~= s.ptr then ok = false end
            read_ptr = s.ptr
          end
        end
        local combine = (e.kind == "call" and (defined[e:field("callee"):text()] or ATOMIC[e:field("callee"):text()]))
          or (is(e, "assign") and COMBINE[e.op] and e:field("lhs").kind == "ident" and not mentions(e:field("rhs"), e:field("lhs"):text()))
          or self_minmax(e)
        if store and not pure(e:field("rhs")) then store, combine = nil, false end
        if not store then
          for _, a in ipairs(e.kind == "call" and { table.unpack(e:children(), 2) } or { e:field("rhs") }) do
            if not pure(a) then combine = false end
          end
        end
        if ok and read_ptr and ptrs[read_ptr] and (store and ptrs[store:field("object"):text()]
          and not ptrs[store:field("object"):text()].const or (not store and combine)) then
          out[#out + 1] = { loop = st, lp = lp, stmt = body, expr = e, store = store, reads = reads, read = read_ptr,
                            write = store and store:field("object"):text() }
        end
      end
    end
  end
  return out
end

local function vector_body(v, indent)
  local inner = indent .. "  "
  local lines = { "{", inner .. "float4 q = " .. v.read .. "4[" .. v.lp.c .. "];" }
  local function with(comp, node)
    local subs = {}
    for _, r in ipairs(v.reads) do subs[#subs + 1] = { r, "q." .. comp } end
    return rewrite(node, subs)
  end
  if v.store then
    local args = {}
    for i, comp in ipairs(COMPONENTS) do args[i] = with(comp, v.expr:field("rhs")) end
    local head = inner .. v.write .. "4[" .. v.lp.c .. "] = make_float4("
    local one = head .. table.concat(args, ", ") .. ");"
    if #one <= 100 then lines[#lines + 1] = one
    else
      lines[#lines + 1] = head .. args[1] .. ", " .. args[2] .. ","
      lines[#lines + 1] = string.rep(" ", #head) .. args[3] .. ", " .. args[4] .. ");"
    end
  else
    for _, comp in ipairs(COMPONENTS) do lines[#lines + 1] = inner .. with(comp, v.stmt) end
  end
  lines[#lines + 1] = indent .. "}"
  return table.concat(lines, "\n")
end

local function requires_clause(unit, N)
  for _, a in ipairs(unit:annotations()) do
    local text = a.text:match("^requires%s+(.*)$")
    if text then
      for clause in (text .. "&&"):gmatch("(.-)&&") do
        if clause:match("^%s*(.-)%s*$") == N .. " % 4 == 0" then return a end
      end
    end
  end
end

local function apply_site(unit, fn, N, sites)
  local ptrs = aligned_pointers(fn, N)
  local defined = {}
  for _, f in ipairs(support.functions(unit, { host = true })) do defined[f:name()] = true end
  local loops = scalar_loops(fn, N, ptrs, defined)
  if #loops == 0 then return end
  local w = written(fn)
  if w[N] then return end
  for _, v in ipairs(loops) do if w[v.read] or (v.write and w[v.write]) then return end end
  for _, name in ipairs({ N .. "4", "q" }) do if unit:has_word(name) then return end end
  for _, v in ipairs(loops) do
    if unit:has_word(v.read .. "4") or (v.write and unit:has_word(v.write .. "4")) then return end
  end
  if #unit:annotations() == 0 or not indent_of(loops[1].loop) then return end
  -- The views go after the rows' declarations, so before no loop.
  for _, v in ipairs(loops) do
    for _, p in ipairs({ v.read, v.write or false }) do
      local decl = p and ptrs[p].decl
      if decl and span(decl) > span(loops[1].loop) then return end
    end
  end
  sites[#sites + 1] = support.site(T, unit, fn, { direction = "apply", key = fn:name() .. ":" .. N, line = loops[1].loop.line,
    N = N, loops = loops, ptrs = ptrs,
    check = string.format("%d loop(s) over %s move with threadIdx.x and touch 16-byte aligned float rows only at the loop index",
      #loops, N) })
end

function T.apply(site)
  local ok, f = support.same_unit(site, T, "apply")
  if not ok then return nil, f end
  local unit, N, loops = site.unit, site.N, site.loops
  local indent = indent_of(loops[1].loop)
  local edits, views, after = {}, {}, nil
  for _, v in ipairs(loops) do
    for _, p in ipairs({ v.read, v.write or false }) do
      if p and not views[p] then
        views[p] = true
        views[#views + 1] = p
        local decl = site.ptrs[p].decl
        if decl and (not after or span(decl) > span(after)) then after = decl end
      end
    end
  end
  local rows = false
  for _, p in ipairs(views) do rows = rows or site.ptrs[p].decl ~= nil end
  local lines = { indent .. string.format(rows and "// %s %% 4 == 0 keeps every row start 16-byte aligned."
    or "// %s %% 4 == 0: whole float4 only (allocations are 16-byte aligned).", N) }
  for _, p in ipairs(views) do
    local c = site.ptrs[p].const and "const " or ""
    lines[#lines + 1] = string.format("%s%sfloat4 *%s4 = reinterpret_cast<%sfloat4 *>(%s);", indent, c, p, c, p)
  end
  lines[#lines + 1] = string.format("%sint %s4 = %s >> 2;", indent, N, N)
  local block = table.concat(lines, "\n")
  if after then
    edits[#edits + 1] = { after = after, text = "\n" .. block }
  else
    local _, line_start = indent_of(loops[1].loop)
    edits[#edits + 1] = { begin = line_start, ["end"] = line_start - 1, text = block .. "\n" }
  end
  for _, v in ipairs(loops) do
    edits[#edits + 1] = { node = v.lp.bound, text = N .. "4" }
    local _, e = span(v.lp.body)
    edits[#edits + 1] = { begin = close_paren(v.loop) + 1, ["end"] = e, text = " " .. vector_body(v, indent) }
  end
  if not requires_clause(unit, N) then
    local src, pos = tostring(unit), 1
    local anns = unit:annotations()
    for _ = 1, anns[#anns].line do pos = (src:find("\n", pos, true) or #src) + 1 end
    edits[#edits + 1] = { begin = pos, ["end"] = pos - 1, text = "// @kl requires " .. N .. " % 4 == 0\n" }
  end
  return support.edit(site, edits)
end

-- ---------------------------------------------------------------- undo

-- The views of fn's top block: `[const] float4 *P4 = reinterpret_cast<[const] float4 *>(P);`
-- and `int N4 = N >> 2;`, by name.
local function views_of(fn)
  local views, counts = {}, {}
  for _, st in ipairs(fn:body():children()) do
    local dc = st.kind == "decl_stmt" and st:declaration()
    if dc and #dc.declarators == 1 and not dc.shared then
      local dd = dc.declarators[1]
      local init = dd.node:field("value")
      local text = init and init:text() or ""
      local base = dd.stars == 1 and dc.base.text == "float4" and
        text:match("^reinterpret_cast%s*<%s*c?o?n?s?t?%s*float4%s*%*%s*>%s*%(%s*([%a_][%w_]*)%s*%)$")
      local n = dd.stars == 0 and dc.base.text == "int" and text:match("^([%a_][%w_]*)%s*>>%s*2$")
      if base or n then views[dd.name.text] = { base = base, count = n, decl = st } end
    end
  end
  return views, counts
end

-- The text of `stmt` with each q.<comp> member replaced by `repl`, or nil
-- when q appears any other way (or with another component than `comp`).
local function unvectorized(stmt, q, comp, repl)
  local subs = {}
  for id in stmt:walk({ "ident" }) do
    if id:text() == q then
      local m = id:parent()
      if not (is(m, "member") and m:field("object").id == id.id and m:field("member"):text() == comp) then return nil end
      subs[#subs + 1] = { m, repl }
    end
  end
  return rewrite(stmt, subs)
end

-- A vector loop's scalar statement text, or nil when it is not the shape apply writes.
local function scalar_of(loop, lp, views)
  local body = lp.body
  local kids = body.kind == "compound" and body:children() or {}
  local first = kids[1]
  local dc = is(first, "decl_stmt") and first:declaration()
  if not (dc and dc.base.text == "float4" and #dc.declarators == 1 and dc.declarators[1].stars == 0) then return nil end
  local q = dc.declarators[1].name.text
  local load = dc.declarators[1].node:field("value")
  if not (is(load, "index") and is(load:field("index"), "ident", lp.c) and load:field("object").kind == "ident") then return nil end
  local rview = views[load:field("object"):text()]
  if not (rview and rview.base) then return nil end
  local elem = rview.base .. "[" .. lp.c .. "]"
  for _, k in ipairs({ table.unpack(kids, 2) }) do
    local subs = subscripts(k, lp.c)
    if not subs then return nil end
    for _, su in ipairs(subs) do if not (views[su.ptr] and views[su.ptr].base) then return nil end end
  end
  if #kids == 5 then
    local scalar = unvectorized(kids[2], q, "x", elem)
    for i = 2, 4 do
      if not scalar or unvectorized(kids[i + 1], q, COMPONENTS[i], elem) ~= scalar then return nil end
    end
    if subscripts(kids[2], lp.c)[1] then return nil end
    return scalar, { rview }
  elseif #kids == 2 and kids[2].kind == "expr_stmt" then
    local e = kids[2]:children()[1]
    local lhs, rhs = is(e, "assign") and e.op == "=" and e:field("lhs"), e and e:field("rhs")
    if not (is(lhs, "index") and is(lhs:field("index"), "ident", lp.c) and lhs:field("object").kind == "ident") then return nil end
    local wview = views[lhs:field("object"):text()]
    if not (wview and wview.base and is(rhs, "call") and rhs:field("callee"):text() == "make_float4") then return nil end
    local args = rhs:children()
    if #args ~= 5 then return nil end
    local scalar = unvectorized(args[2], q, "x", elem)
    for i = 2, 4 do
      if not scalar or unvectorized(args[i + 1], q, COMPONENTS[i], elem) ~= scalar then return nil end
    end
    if subscripts(args[2], lp.c)[1] then return nil end
    return wview.base .. "[" .. lp.c .. "] = " .. scalar .. ";", { rview, wview }
  end
end

local function undo_site(unit, fn, sites)
  local views = views_of(fn)
  local w = written(fn)
  -- A view must be of a float row apply would vectorize, and nothing it
  -- depends on may be written.
  for name, v in pairs(views) do
    local N = v.count
    if N and w[N] then views[name] = nil end
  end
  for name, v in pairs(views) do
    if v.base then
      local ok = false
      for _, other in pairs(views) do
        if other.count and aligned_pointers(fn, other.count)[v.base] then ok = true end
      end
      if not ok or w[v.base] or w[name] then views[name] = nil end
    end
  end
  local by_count = {}
  for _, st in ipairs(fn:body():children()) do
    local lp = st.kind == "for" and loop_parts(st, fn)
    local count = lp and strided(unit, fn, lp) and views[lp.bound:text()]
    if count and count.count then
      local scalar, used = scalar_of(st, lp, views)
      if scalar then
        local N = count.count
        by_count[N] = by_count[N] or { loops = {}, used = { [lp.bound:text()] = true } }
        table.insert(by_count[N].loops, { loop = st, lp = lp, scalar = scalar })
        for _, v in ipairs(used) do
          for name, vv in pairs(views) do if vv == v then by_count[N].used[name] = true end end
        end
      end
    end
  end
  for N, g in pairs(by_count) do
    -- Every use of the views must be inside the loops undone, so that
    -- their declarations can go.
    local inside, ok = {}, requires_clause(unit, N) ~= nil
    for _, l in ipairs(g.loops) do
      for id in l.loop:walk({ "ident" }) do if g.used[id:text()] then inside[id.id] = true end end
    end
    for name in pairs(g.used) do
      for _, id in ipairs(support.uses(fn, name)) do
        if not inside[id.id] and id:parent().kind ~= "declarator" then ok = false end
      end
    end
    if ok then
      sites[#sites + 1] = support.site(T, unit, fn, { direction = "undo", key = fn:name() .. ":" .. N,
        line = g.loops[1].loop.line, N = N, loops = g.loops, views = g.used, decls = views,
        check = string.format("%d float4 loop(s) over %s4 = %s >> 2 are four copies of one scalar statement (or one make_float4 store of them), with requires %s %% 4 == 0",
          #g.loops, N, N, N) })
    end
  end
end

-- The requires edit that drops the clause `N % 4 == 0`.
local function drop_clause(unit, N)
  local a = requires_clause(unit, N)
  local src = tostring(unit)
  local pos = 1
  for _ = 2, a.line do pos = src:find("\n", pos, true) + 1 end
  local stop = src:find("\n", pos, true) or #src + 1
  local line = src:sub(pos, stop - 1)
  local clause = N .. " %% 4 == 0"
  if line:match("^%s*//%s*@kl%s+requires%s+" .. clause .. "%s*$") then
    return { begin = pos, ["end"] = stop, text = "" }
  end
  local s, e = line:find("%s*&&%s*" .. clause, 1)
  if not s then s, e = line:find(clause .. "%s*&&%s*", 1) end
  return { begin = pos + s - 1, ["end"] = pos + e - 1, text = "" }
end

function T.undo(site)
  local ok, f = support.same_unit(site, T, "undo")
  if not ok then return nil, f end
  local unit, src = site.unit, tostring(site.unit)
  local edits = {}
  for name in pairs(site.views) do
    local st = site.decls[name].decl
    local _, line_start = indent_of(st)
    local _, e = span(st)
    local stop = src:find("\n", e, true) or #src
    edits[#edits + 1] = { begin = line_start, ["end"] = stop, text = "" }
  end
  -- The comment apply writes above the views goes with them.
  table.sort(edits, function(a, b) return a.begin < b.begin end)
  local above = src:sub(1, edits[1].begin - 1):match("\n([ \t]*//[^\n]*\n)$")
  if above and above:find(site.N .. " % 4 == 0", 1, true) then
    edits[1].begin = edits[1].begin - #above
  end
  for _, l in ipairs(site.loops) do
    edits[#edits + 1] = { node = l.lp.bound, text = site.N }
    -- The scalar statement goes on the loop's line, or below it when that is too long.
    local at = close_paren(l.loop)
    local b = select(2, indent_of(l.loop))
    local _, e = span(l.lp.body)
    local text = " " .. l.scalar
    if at - b + 1 + #text > 100 then text = "\n" .. (indent_of(l.loop) or "") .. "  " .. l.scalar end
    edits[#edits + 1] = { begin = at + 1, ["end"] = e, text = text }
  end
  -- The requires clause stays while any float4 is left.
  local text, f2 = support.edit(site, edits)
  if not text or require("kl.source").parse(text):has_word("float4") then return text, f2 end
  edits[#edits + 1] = drop_clause(unit, site.N)
  return support.edit(site, edits)
end

function T.find(unit)
  local sites = {}
  for _, fn in ipairs(support.functions(unit)) do
    local bounds = {}
    for _, st in ipairs(fn:body():children()) do
      local lp = st.kind == "for" and loop_parts(st, fn)
      if lp and not bounds[lp.bound:text()] then
        local N = lp.bound:text()
        bounds[N] = true
        for _, p in ipairs(fn:params()) do
          if p.name == N and p.pointer_depth == 0 and p.type_span.text == "int" then apply_site(unit, fn, N, sites) end
        end
      end
    end
    undo_site(unit, fn, sites)
  end
  table.sort(sites, function(a, b) return a.line < b.line end)
  return sites
end

return T
