-- persistent_grid's block-per-item idiom (softmax v5 <-> v6): finding the
-- regions whose item is blockIdx.x, or the loops `for (T r = blockIdx.x;
-- r < N; r += gridDim.x)` that replaced them, and the edits between the two.
-- find_* return plain descriptions ({ line, check, ... }); persistent_grid
-- makes them sites and writes the grid.
local support = require "klineage.transforms.support"
local L = require "klineage.transforms.lib.grid_loops"
local SH = require "klineage.transforms.lib.grid_shared_order"

local M = {}

local function block_loop(f)
  local d = f.kind == "for" and L.single_decl(f:field("init"))
  if not d or L.norm(d.value:text()) ~= "blockIdx.x" then return nil end
  local cond, step = f:field("cond"), f:field("step")
  if not (cond and cond.op == "<" and cond:field("lhs"):text() == d.name and step and step.kind == "assign"
      and step.op == "+=" and step:field("lhs"):text() == d.name and L.norm(step:field("rhs"):text()) == "gridDim.x") then
    return nil
  end
  return { node = f, r = d.name, bound = cond:field("rhs"), body = f:field("body") }
end

-- Outer names of fn (parameters, locals declared outside node) that node writes.
local function writes_outer(fn, node)
  local b, e = L.span(node)
  for _, p in ipairs(fn:params()) do
    if p.name and p.name ~= "" and L.read_only(node, p.name) then return "it writes the parameter " .. p.name end
  end
  for d in fn:body():walk({ "declarator" }) do
    local db = L.span(d)
    local name = d:field("name") and d:field("name"):text()
    if name and (db < b or db > e) and L.read_only(node, name) then return "it writes " .. name .. ", declared outside" end
  end
end

local function in_loop(n, top)
  local p = n:parent()
  while p and p.id ~= top.id do
    if p.kind == "for" or p.kind == "while" or p.kind == "do" or p.kind == "range_for" then return true end
    p = p:parent()
  end
end

local function count_idents(node, name)
  local c = 0
  for id in node:walk({ "ident" }) do if id:text() == name then c = c + 1 end end
  return c
end

local function jumps_ok(body)
  local j = L.jumps(body)
  return #j.breaks == 0 and #j.continues == 0 and #j.returns == 0 and not j.nested_return
end

-- Undo of the block-per-item idiom: every blockIdx/gridDim in such loops.
function M.find_undo(unit, fn, launch)
  local body, loops = fn:body(), {}
  for f in body:walk({ "for" }) do loops[#loops + 1] = block_loop(f) end
  if #loops == 0 or count_idents(body, "blockIdx") ~= #loops or count_idents(body, "gridDim") ~= #loops then return nil end
  local bound = L.norm(loops[1].bound:text())
  for _, l in ipairs(loops) do
    if L.norm(l.bound:text()) ~= bound or #L.uses(l.bound, l.r) > 0 then return nil end
    if L.item_local(unit, l.body, { barriers = true }) or L.read_only(l.body, l.r) or writes_outer(fn, l.body)
        or not jumps_ok(l.body) or (l.body.kind == "compound" and #L.statements(l.body) == 0) then
      return nil
    end
  end
  local nl = L.launch_bound(unit, fn, loops[1].bound:text())
  if not nl then return nil end
  local old = L.norm(launch.grid.text)
  if unit:define(old) and L.other_uses(unit, old, launch.grid.begin, launch.grid["end"]) > 0 then return nil end
  local v = L.const_value(unit, launch.grid.text)
  return { line = loops[1].node.line, per_sm = v and v % 132 == 0 and v // 132 or nil,
    check = string.format("%d loop(s) for (r = blockIdx.x; r < %s; r += gridDim.x) hold every blockIdx/gridDim; their bodies read no other, write no outer variable and have no jump out; the grid becomes %s",
      #loops, loops[1].bound:text(), nl),
    loops = loops, grid = nl }
end

local STMT = { decl_stmt = true, expr_stmt = true, compound = true, ["if"] = true, ["for"] = true, ["while"] = true,
  ["do"] = true, ["return"] = true, switch = true, range_for = true }

-- The region whose item blockIdx.x (member m) is: `{ T r = blockIdx.x; ... }`
-- or the expression statement holding it; nil for any other use.
local function region_of(m, body)
  local p = m:parent()
  while p and not STMT[p.kind] do p = p:parent() end
  if not p then return nil end
  if p.kind == "expr_stmt" then return { node = p } end
  local d = p.kind == "decl_stmt" and L.single_decl(p)
  local c = p:parent()
  if d and L.norm(d.value:text()) == "blockIdx.x" and c and c.kind == "compound" and c.id ~= body.id
      and c:children()[1].id == p.id then
    return { node = c, decl = p, r = d.name }
  end
end

-- The tail of the kernel from its first statement that reads blockIdx.x
-- (a declaration at the top level), `(void)N;` at the very end left out.
local function tail_region(unit, fn, bound)
  local stmts, body = L.statements(fn:body()), fn:body()
  local k
  for j, st in ipairs(stmts) do if count_idents(st, "blockIdx") > 0 then k = j break end end
  if not k or stmts[k].kind ~= "decl_stmt" or count_idents(body, "r") > 0 then return nil end
  local last = #stmts
  if L.norm(stmts[last]:text()) == "(void)" .. L.norm(bound) .. ";" then last = last - 1 end
  if last < k then return nil end
  local list, members = { table.unpack(stmts, k, last) }, 0
  for m in body:walk({ "member" }) do if L.norm(m:text()) == "blockIdx.x" then members = members + 1 end end
  local inside = 0
  for _, st in ipairs(list) do
    inside = inside + count_idents(st, "blockIdx")
    if L.item_local(unit, st, { barriers = true, own_block = true }) or not jumps_ok(st) then return nil end
    if L.norm(st:text()):match("^%(void%)") and L.norm(st:text()) == "(void)" .. L.norm(bound) .. ";" then return nil end
  end
  if inside ~= members or count_idents(body, "blockIdx") ~= members then return nil end
  for _, p in ipairs(fn:params()) do
    for _, st in ipairs(list) do if p.name and p.name ~= "" and L.read_only(st, p.name) then return nil end end
  end
  for j = 1, k - 1 do
    for d in stmts[j]:walk({ "declarator" }) do
      local name = d:field("name") and d:field("name"):text()
      for _, st in ipairs(list) do if name and L.read_only(st, name) then return nil end end
    end
  end
  if not SH.separated(unit, list) then return nil end
  return { node = stmts[k], list = list, r = "r", tail = true }
end

-- Apply of the block-per-item idiom.
function M.find_apply(unit, fn, launch)
  local body, g = fn:body(), launch.grid.text
  local gl = L.launch_bound(unit, fn, g)
  -- The bound is written in C as the launch line has it: no cdiv/min there.
  if count_idents(body, "gridDim") > 0 or not gl or L.norm(gl) ~= L.norm(g)
      or g:find("[%a_][%w_]*%s*%(") then
    return nil
  end
  local tail = tail_region(unit, fn, g)
  if tail then
    return { line = tail.node.line,
      check = string.format("the grid is the item count %s and blockIdx.x is only read from line %d on, by statements that read no gridDim, write no earlier variable, have no jump out and have a barrier between one item's last shared access and the next one's first",
        g, tail.node.line), regions = { tail }, bound = g }
  end
  local regions, claimed, members = {}, {}, 0
  for m in body:walk({ "member" }) do
    if L.norm(m:text()) == "blockIdx.x" then
      members = members + 1
      local rg = region_of(m, body)
      if not rg then return nil end
      if not claimed[rg.node.id] then
        claimed[rg.node.id] = true
        regions[#regions + 1] = rg
      end
    end
  end
  if #regions == 0 or count_idents(body, "blockIdx") ~= members then return nil end
  for _, rg in ipairs(regions) do
    local n = rg.node
    if in_loop(n, body) or L.item_local(unit, n, { barriers = true, own_block = true }) or writes_outer(fn, n)
        or not jumps_ok(n) then
      return nil
    end
    if rg.decl then
      for k, st in ipairs(L.statements(n)) do if k > 1 and L.read_only(st, rg.r) then return nil end end
      if count_idents(n, "blockIdx") ~= 1 then return nil end
    else
      if count_idents(n, "r") > 0 then return nil end
      rg.r = "r"
    end
    if not SH.separated(unit, n.kind == "compound" and L.statements(n) or { n }) then return nil end
  end
  return { line = regions[1].node.line,
    check = string.format("the grid is the item count %s and blockIdx.x is only the item of %d statement(s) outside loops that read no gridDim, write no outer variable, have no jump out and end with a barrier after their last shared access",
      g, #regions),
    regions = regions, bound = g }
end

-- The text of apply at `site`, with `grid_edits` (the launch line and its #define) added.
function M.apply_edit(site, grid_edits)
  local unit, fn, text = site.unit, nil, tostring(site.unit)
  for _, g in ipairs(support.functions(unit, { global = true })) do if g:name() == site.fn then fn = g end end
  local edits = {}
  for _, rg in ipairs(site.regions) do
    local b, e = L.span(rg.node)
    if rg.tail then
      local text2, out, pos = text, {}, b
      local _, te = L.span(rg.list[#rg.list])
      for _, st in ipairs(rg.list) do
        for m in st:walk({ "member" }) do
          if L.norm(m:text()) == "blockIdx.x" then
            local mb, me = L.span(m)
            out[#out + 1] = text2:sub(pos, mb - 1) .. rg.r
            pos = me + 1
          end
        end
      end
      out[#out + 1] = text2:sub(pos, te)
      local ind = L.indent_at(text, b)
      edits[#edits + 1] = { begin = b, ["end"] = te, text = string.format("for (int %s = blockIdx.x; %s < %s; %s += gridDim.x) {\n%s  %s\n%s}",
        rg.r, rg.r, site.bound, rg.r, ind, L.shift(table.concat(out), 2), ind) }
    elseif rg.decl then
      local _, de = L.span(rg.decl)
      local dt = rg.decl:text():gsub(";%s*$", "")
      edits[#edits + 1] = { begin = b, ["end"] = de,
        text = string.format("for (%s; %s < %s; %s += gridDim.x) {", dt, rg.r, site.bound, rg.r) }
    else
      local ind, out, pos = L.indent_at(text, b), {}, b
      for m in rg.node:walk({ "member" }) do
        if L.norm(m:text()) == "blockIdx.x" then
          local mb, me = L.span(m)
          out[#out + 1] = text:sub(pos, mb - 1) .. rg.r
          pos = me + 1
        end
      end
      out[#out + 1] = text:sub(pos, e)
      edits[#edits + 1] = { begin = b, ["end"] = e, text = string.format("for (int %s = blockIdx.x; %s < %s; %s += gridDim.x)\n%s  %s",
        rg.r, rg.r, site.bound, rg.r, ind, L.shift(table.concat(out), 2)) }
    end
  end
  for _, s in ipairs(L.statements(fn:body())) do
    if L.norm(s:text()) == "(void)" .. L.norm(site.bound) .. ";" then edits[#edits + 1] = L.drop_line(unit, s) end
  end
  for _, x in ipairs(grid_edits) do edits[#edits + 1] = x end
  table.sort(edits, function(a, b) return a.begin < b.begin end)
  return support.edit(site, edits)
end

function M.undo_edit(site)
  local unit, text, s = site.unit, tostring(site.unit), site
  local fn
  for _, g in ipairs(support.functions(unit, { global = true })) do if g:name() == s.fn then fn = g end end
  local edits = {}
  for _, l in ipairs(s.loops) do
    local fb, fe = L.span(l.node)
    local decl = l.node:field("init"):text():gsub(";?%s*$", ";")
    if l.body.kind == "compound" then
      local bb = L.span(l.body)
      local first = L.statements(l.body)[1]
      local inner = L.indent_at(text, (L.span(first)))
      edits[#edits + 1] = { begin = fb, ["end"] = bb, text = "{\n" .. inner .. decl }
    else
      local bb, be = L.span(l.body)
      local out, pos = {}, bb
      for _, id in ipairs(L.uses(l.body, l.r)) do
        local ib, ie = L.span(id)
        out[#out + 1] = text:sub(pos, ib - 1) .. "blockIdx.x"
        pos = ie + 1
      end
      out[#out + 1] = text:sub(pos, be)
      local own_line = text:sub(1, bb - 1):match("\n[ \t]*$")
      local delta = own_line and (#L.indent_at(text, fb) - #L.indent_at(text, bb)) or 0
      edits[#edits + 1] = { begin = fb, ["end"] = fe, text = L.shift(table.concat(out), delta) }
    end
  end
  -- A bound that was a parameter and is read nowhere else is marked used, as one-block-per-item kernels do.
  local bound = L.norm(s.loops[1].bound:text())
  local stmts = L.statements(fn:body())
  if bound:match("^[%a_][%w_]*$") and #L.uses(fn:body(), bound) == #s.loops and stmts[1] then
    local is_param = false
    for _, p in ipairs(fn:params()) do is_param = is_param or p.name == bound end
    if is_param then
      local b1 = L.span(stmts[1])
      edits[#edits + 1] = { begin = b1, ["end"] = b1 - 1, text = "(void)" .. bound .. ";\n" .. L.indent_at(text, b1) }
    end
  end
  edits[#edits + 1] = { begin = s.launch.grid.begin, ["end"] = s.launch.grid["end"], text = s.grid }
  local old = L.norm(s.launch.grid.text)
  local drop = unit:define(old) and L.drop_define(unit, old, s.launch.grid.begin, s.launch.grid["end"])
  if drop then edits[#edits + 1] = drop end
  table.sort(edits, function(a, b) return a.begin < b.begin end)
  return support.edit(site, edits)
end


return M
