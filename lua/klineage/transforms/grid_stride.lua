-- Grid-stride loop: each thread walks items i, i + gridDim.x * B, ... instead
-- of handling the one item blockIdx.x * B + threadIdx.x, so any grid covers
-- the work and a capped grid amortizes each thread's setup over many items.
--
-- Apply: `T i = blockIdx.x * B + threadIdx.x;` (B the launch's 1-D block
-- size or blockDim.x) right before the guard `if (i < N) S` (nothing after
-- it reads i), or before `if (i >= N) return;` / `if (i >= N || C) return;`
-- and the rest of the kernel, becomes `for (T i = ...; i < N; i += gridDim.x
-- * B) ...` (a return of the rest becomes continue). The check, because the
-- body now runs for several items per thread and a thread may run it more
-- or fewer times than its neighbours: it (and what it calls) has no barrier
-- or warp collective and reads no blockIdx/gridDim, writes neither i nor a
-- parameter nor a local declared before, and no return sits in an inner
-- loop; the kernel reads no other blockIdx/gridDim. The grid stays (params.max_blocks = 0) or is capped with min(...).
--
-- Undo: the reverse, for such a loop whose bound N is an expression over
-- the kernel's integer parameters and constants; the launch grid becomes
-- cdiv(N, B) unless it already is, and a grid constant nothing else reads
-- loses its #define. A fixed grid that other code reads (reduction's
-- partial_count reads GRID_BLOCKS) is refused: the partials depend on it.
local support = require "klineage.transforms.support"
local L = require "klineage.transforms.lib.grid_loops"

local T = {
  name = "grid_stride",
  intent = "make each thread loop over items with a grid-size stride, so the kernel is correct for any grid and a capped grid reuses each thread's setup",
  params = { max_blocks = { 0, 528, 1056, 2112 } },  -- 0: the grid stays; else min(grid, max_blocks)
}

-- nil when `region` (a list of statements) may run once per item of a
-- thread; else why not.
local function region_ok(unit, fn, stmts, k, region, i)
  for _, r in ipairs(region) do
    local why = L.item_local(unit, r) or L.read_only(r, i)
    if why then return why end
    for _, p in ipairs(fn:params()) do
      if p.name and p.name ~= "" and L.read_only(r, p.name) then return "it writes the parameter " .. p.name end
    end
    for j = 1, k - 1 do
      for d in stmts[j]:walk({ "declarator" }) do
        local name = d:field("name") and d:field("name"):text()
        if name and L.read_only(r, name) then return "it writes " .. name .. ", declared before the loop" end
      end
    end
    local jumps = L.jumps(r)
    if #jumps.breaks > 0 or #jumps.continues > 0 then return "a break or continue would leave the loop" end
    if jumps.nested_return then return "a return inside an inner loop cannot become continue" end
  end
end

local function text_with(unit, b, e, nodes, word)
  local text, out, pos = tostring(unit), {}, b
  for _, n in ipairs(nodes) do
    local nb, ne = L.span(n)
    out[#out + 1] = text:sub(pos, nb - 1) .. word .. ";"
    pos = ne + 1
  end
  out[#out + 1] = text:sub(pos, e)
  return table.concat(out)
end

local function all_jumps(list, kind)
  local out = {}
  for _, r in ipairs(list) do for _, j in ipairs(L.jumps(r)[kind]) do out[#out + 1] = j end end
  table.sort(out, function(a, b) return L.span(a) < L.span(b) end)
  return out
end

local function bare_return(n)
  return n and n.kind == "return" and #n:children() == 0
end

-- How many blockIdx/gridDim the kernel reads: the index's (and the
-- stride's) must be all, since the grid changes under the others.
local function grid_reads(fn)
  local n = 0
  for id in fn:body():walk({ "ident" }) do
    if id:text() == "blockIdx" or id:text() == "gridDim" then n = n + 1 end
  end
  return n
end

local function apply_site(unit, fn, launch, stmts, k)
  local d = stmts[k].kind == "decl_stmt" and L.single_decl(stmts[k])
  local B = d and L.thread_index(d.value:text(), launch.block.text)
  local g = stmts[k + 1]
  if not B or not g or g.kind ~= "if" or g:field("else") then return nil end
  local i, cond, form, bound, extra = d.name, g:field("cond"), nil, nil, nil
  local lhs = cond:field("lhs")
  if cond.op == "<" and lhs.kind == "ident" and lhs:text() == i and not L.used_after(stmts, k + 1, i) then
    form, bound = "if", cond:field("rhs")
  elseif bare_return(g:field("then")) and k + 2 <= #stmts then
    if cond.op == ">=" and lhs.kind == "ident" and lhs:text() == i then form, bound = "return", cond:field("rhs")
    elseif cond.op == "||" and lhs.kind == "binary" and lhs.op == ">=" and lhs:field("lhs"):text() == i then
      form, bound, extra = "return", lhs:field("rhs"), cond:field("rhs")
    end
  end
  if not form or #L.uses(bound, i) > 0 or grid_reads(fn) ~= 1 then return nil end
  local region = form == "if" and { g:field("then") } or { table.unpack(stmts, k + 2) }
  if extra then table.insert(region, 1, extra) end
  if region_ok(unit, fn, stmts, k, region, i) then return nil end
  return support.site(T, unit, fn, { direction = "apply", key = fn:name() .. ":" .. i, line = stmts[k].line,
    check = string.format("%s = blockIdx.x * %s + threadIdx.x guards its item with %s; the guarded code has no barrier, warp collective or blockIdx/gridDim and writes no outer variable",
      i, B, g:field("cond"):text()),
    form = form, decl = stmts[k], guard = g, extra = extra, stmts = stmts, k = k, i = i, B = B,
    bound = bound:text(), launch = launch })
end

local function stride_of(s, B)
  local n = L.norm(s)
  if n == "gridDim.x*" .. B or n == B .. "*gridDim.x" then return true end
end

local function undo_site(unit, fn, launch, stmts, k)
  local f = stmts[k]
  local d = f.kind == "for" and L.single_decl(f:field("init"))
  local B = d and L.thread_index(d.value:text(), launch.block.text)
  if not B then return nil end
  local i, cond, step, body = d.name, f:field("cond"), f:field("step"), f:field("body")
  if not (cond and cond.op == "<" and cond:field("lhs"):text() == i and step and step.kind == "assign"
      and step.op == "+=" and step:field("lhs"):text() == i and stride_of(step:field("rhs"):text(), B)) then
    return nil
  end
  local bound = cond:field("rhs")
  if grid_reads(fn) ~= 2 then return nil end
  local nl = L.launch_bound(unit, fn, bound:text())
  if not nl or #L.uses(bound, i) > 0 then return nil end
  local count = 0
  for dd in fn:body():walk({ "declarator" }) do if dd:field("name") and dd:field("name"):text() == i then count = count + 1 end end
  if count ~= 1 then return nil end
  local last = k == #stmts and body.kind == "compound" and #L.statements(body) > 0
  local list = last and L.statements(body) or { body }
  local extra
  if last and list[1].kind == "if" and not list[1]:field("else") and list[1]:field("then").kind == "continue" then
    extra = list[1]
  end
  for _, r in ipairs(list) do
    local why = L.item_local(unit, r) or L.read_only(r, i)
    for _, p in ipairs(fn:params()) do why = why or (p.name and p.name ~= "" and L.read_only(r, p.name)) end
    for j = 1, k - 1 do
      for dd in stmts[j]:walk({ "declarator" }) do
        local name = dd:field("name") and dd:field("name"):text()
        why = why or (name and L.read_only(r, name))
      end
    end
    local jumps = L.jumps(r)
    if why or #jumps.breaks > 0 or (#jumps.continues > 0 and not last) then return nil end
  end
  local grid = "cdiv(" .. nl .. ", " .. launch.block.text .. ")"
  local old, params = L.norm(launch.grid.text), { max_blocks = 0 }
  local cap = old:match("^min%((.*),(%d+)%)$")
  if cap and cap == L.norm(grid) then
    params.max_blocks = tonumber(old:match(",(%d+)%)$"))
  elseif old ~= L.norm(grid) and unit:define(old) then
    if L.other_uses(unit, old, launch.grid.begin, launch.grid["end"]) > 0 then return nil end
  end
  local ok = false
  for _, v in ipairs(T.params.max_blocks) do ok = ok or v == params.max_blocks end
  if not ok then params.max_blocks = 0 end
  return support.site(T, unit, fn, { direction = "undo", key = fn:name() .. ":" .. i, line = f.line,
    check = string.format("for over %s from blockIdx.x * %s + threadIdx.x by gridDim.x * %s to %s; its body has no barrier, warp collective or blockIdx/gridDim and writes no outer variable; the grid becomes %s",
      i, B, B, bound:text(), grid),
    loop = f, decl_text = d, i = i, B = B, bound = bound:text(), grid = grid, last = last, list = list, extra = extra,
    launch = launch, params = params })
end

function T.find(unit)
  local sites = {}
  for _, fn in ipairs(support.functions(unit, { global = true })) do
    local launch = L.launch(unit, fn)
    if launch then
      local stmts = L.statements(fn:body())
      for k = 1, #stmts do
        local s = apply_site(unit, fn, launch, stmts, k) or undo_site(unit, fn, launch, stmts, k)
        if s then sites[#sites + 1] = s end
      end
    end
  end
  return sites
end

function T.apply(site, params)
  local ok, f = support.same_unit(site, T, "apply")
  if not ok then return nil, f end
  local cap = params and params.max_blocks or 0
  if math.type(cap) ~= "integer" or cap < 0 then return support.refuse(site, "max_blocks must be a count of blocks (0: keep the grid)") end
  local text, s = tostring(site.unit), site
  local db = L.span(s.decl)
  local ind = L.indent_at(text, db)
  local head = string.format("for (%s %s < %s; %s += gridDim.x * %s)", s.decl:text(), s.i, s.bound, s.i, s.B)
  local new, ge
  if s.form == "if" then
    local body = s.guard:field("then")
    local bb, be = L.span(body)
    local _, ce = L.span(s.guard:field("cond"))
    local rets = all_jumps({ body }, "returns")
    new = head .. text:sub(ce + 1, bb - 1):gsub("^%s*%)", "") .. text_with(site.unit, bb, be, rets, "continue")
    _, ge = L.span(s.guard)
  else
    local first, lastn = s.stmts[s.k + 2], s.stmts[#s.stmts]
    local rb = L.span(first)
    _, ge = L.span(lastn)
    local rest = text_with(site.unit, rb, ge, all_jumps({ table.unpack(s.stmts, s.k + 2) }, "returns"), "continue")
    local pre = s.extra and ("if (" .. s.extra:text() .. ") continue;\n" .. ind .. "  ") or ""
    new = head .. " {\n" .. ind .. "  " .. pre .. L.shift(rest, 2) .. "\n" .. ind .. "}"
  end
  local edits = { { begin = db, ["end"] = ge, text = new } }
  if cap > 0 then
    edits[#edits + 1] = { begin = s.launch.grid.begin, ["end"] = s.launch.grid["end"],
                          text = "min(" .. s.launch.grid.text .. ", " .. cap .. ")" }
  end
  return support.edit(site, edits)
end

local LOOSE = { ternary = true, assign = true }

function T.undo(site)
  local ok, f = support.same_unit(site, T, "undo")
  if not ok then return nil, f end
  local text, s = tostring(site.unit), site
  local fb, fe = L.span(s.loop)
  local ind = L.indent_at(text, fb)
  local decl = s.loop:field("init"):text()
  if not decl:match(";%s*$") then decl = decl .. ";" end
  local new
  if s.last then
    local list = s.list
    local from = s.extra and 2 or 1
    local guard = "if (" .. s.i .. " >= " .. s.bound .. ") return;"
    if s.extra then
      local c = s.extra:field("cond")
      local ct = LOOSE[c.kind] and "(" .. c:text() .. ")" or c:text()
      guard = "if (" .. s.i .. " >= " .. s.bound .. " || " .. ct .. ") return;"
    end
    if from > #list then new = decl .. "\n" .. ind .. guard else
      local bb = L.span(list[from])
      local _, be = L.span(list[#list])
      local inner = L.indent_at(text, bb)
      local body = text_with(site.unit, bb, be, all_jumps({ table.unpack(list, from) }, "continues"), "return")
      new = decl .. "\n" .. ind .. guard .. "\n" .. ind .. L.shift(body, #ind - #inner)
    end
  else
    local body = s.loop:field("body")
    local bb = L.span(body)
    local _, se = L.span(s.loop:field("step"))
    new = decl .. "\n" .. ind .. "if (" .. s.i .. " < " .. s.bound .. ")" .. text:sub(se + 1, bb - 1):gsub("^%s*%)", "")
      .. text:sub(bb, fe)
  end
  local edits = { { begin = fb, ["end"] = fe, text = new } }
  if L.norm(s.launch.grid.text) ~= L.norm(s.grid) then
    edits[#edits + 1] = { begin = s.launch.grid.begin, ["end"] = s.launch.grid["end"], text = s.grid }
    local old = L.norm(s.launch.grid.text)
    if old:match("^[%a_][%w_]*$") then
      local drop = L.drop_define(site.unit, old, s.launch.grid.begin, s.launch.grid["end"])
      if drop then edits[#edits + 1] = drop end
    end
  end
  table.sort(edits, function(a, b) return a.begin < b.begin end)
  return support.edit(site, edits)
end

return T
