-- Register prefetch (software pipelining, conv2d v8_winograd -> v9_prefetch):
-- the next iteration's global loads are issued into the staging registers
-- as soon as the current iteration has consumed them, so their latency
-- overlaps the iteration's compute instead of opening the next one.
--
-- Absent (apply finds it):                Present (undo finds it):
--   for (...; V < B; V += S, ADV...) {      T a[..], b[..];
--     T a[..], b[..];                       load(args);
--     load(args);                           for (...; V < B; V += S) {
--     uses of a, b ...                        uses of a, b ...
--     [the next loop]                         if (V + S < B) { ADV...; load(args); }
--   }                                         [the next loop]
--                                           }
-- The prefetch goes at the end of the line of the statement before the
-- first loop that follows the last use of the staging arrays (v9: after
-- the second barrier, before the GEMMs); undo puts the loads back at the
-- top of the body and the advances back into the step. v9's other change,
-- #pragma unroll 8 -> 2 for registers, is not this transform's.
--
-- The static check (both forms): ADV are `x += e` / `x -= e` of names used
-- nowhere but there, in load's arguments, and before the loop; load's other
-- arguments, S and B are not written in the loop, and V is not in them;
-- the staging arrays are load's arguments, used only before the prefetch
-- point; load is a function of the unit that writes only its staging
-- parameters, calls nothing but make_* and __ldg, and reads global memory
-- only under a conditional (the lineage's masked loads: the hoisted first
-- load also runs when the loop runs zero times); the loop body stores only
-- to registers and shared memory, passes no global pointer to a call, and
-- has no break, continue, return or goto. Anything else is refused.
local support = require "klineage.transforms.support"
local lib = require "klineage.transforms.lib.prefetch"

local T = {
  name = "register_prefetch",
  intent = "load the next iteration's operands into registers before the current iteration's compute, so global latency overlaps the math",
}

local COMMENT = "  // the next iteration's loads, in flight during the work below"
local LOOPS = { ["for"] = true, ["while"] = true, ["do"] = true }

local stmts, call_of, inside, idents = lib.stmts, lib.call_of, lib.inside, lib.idents

-- The staging declaration: array declarators only, no initializers.
local function staging(d)
  local dd = d and d.kind == "decl_stmt" and d:declaration()
  if not dd or dd.shared or dd.static or dd.extern or #dd.declarators == 0 then return nil end
  local names = {}
  for _, x in ipairs(dd.declarators) do
    if not x.name or (x.stars or 0) > 0 or #(x.dims or {}) == 0 or x.init then return nil end
    names[#names + 1] = x.name.text
  end
  return names
end

-- The checks both forms share. p: fn, loop, V, S, B (nodes), adv (assign
-- nodes), stage (names), decl, loads (the load statements: the first one,
-- and in the present form the prefetch's), step_home (where the advances
-- are), before (the body's statements that may use the staging arrays).
-- nil when the site holds, else why not.
local function common(unit, p)
  local fn, kinds = p.fn, lib.kinds(unit, p.fn)
  local stage = {}
  for _, nm in ipairs(p.stage) do stage[nm] = true end
  local call = call_of(p.loads[1])
  local wr = lib.written(stmts(p.loop:field("body")))
  local advs = {}
  for _, a in ipairs(p.adv) do
    if not ((a.op == "+=" or a.op == "-=") and a:field("lhs").kind == "ident") then return "a step part is not x += e" end
    local x = a:field("lhs"):text()
    if advs[x] or x == p.V then return "the step advances " .. x .. " twice" end
    advs[x] = true
  end
  if wr[p.V] then return "the loop writes " .. p.V end
  local inv = idents(p.S, idents(p.B))
  for _, a in ipairs(p.adv) do idents(a:field("rhs"), inv) end
  for _, nm in ipairs(inv) do
    if nm == p.V or advs[nm] or wr[nm] then return nm .. " changes in the loop" end
  end
  for _, a in ipairs({ table.unpack(call:children(), 2) }) do
    for _, nm in ipairs(idents(a)) do
      if nm == p.V then return "the load's arguments use " .. p.V end
      if wr[nm] and not advs[nm] and not stage[nm] then return nm .. " changes in the loop" end
    end
  end
  local lb = lib.range(p.loop)
  local function allowed(id, where)
    if lib.range(id) < lb and not inside(id, p.loop) then return true end
    for _, w in ipairs(where) do if inside(id, w) then return true end end
  end
  for x in pairs(advs) do
    for _, id in ipairs(support.uses(fn, x)) do
      if not allowed(id, { p.step_home, table.unpack(p.loads) }) then return x .. " is used at line " .. id.line end
    end
  end
  for nm in pairs(stage) do
    local decls = 0
    for d in fn:body():walk({ "declarator" }) do if d:children()[1]:text() == nm then decls = decls + 1 end end
    if decls ~= 1 then return nm .. " is declared more than once" end
    for _, id in ipairs(support.uses(fn, nm)) do
      local ok = allowed(id, p.loads) or inside(id, p.decl)
      for _, s in ipairs(p.before) do ok = ok or inside(id, s) end
      if not ok then return nm .. " is used at line " .. id.line .. ", after the prefetch point" end
    end
  end
  local why = lib.load_ok(unit, call, stage)
  if why then return why end
  for i, a in ipairs(call:children()) do
    local r = i > 1 and lib.root(a)
    if r and kinds[r:text()] == "shared" then return "the load reads shared memory through " .. a:text() end
  end
  return lib.body_ok(kinds, p.loop:field("body"), { p.step_home, table.unpack(p.loads) })
end

local function bound_text(b) return (b.kind == "binary" and not b.op:match("^[%+%-%*/%%<>][<>]?$")) and "(" .. b:text() .. ")" or b:text() end
local function step_text(s) return (s.kind == "binary" and not s.op:match("^[%*/%%]$")) and "(" .. s:text() .. ")" or s:text() end
local function guard(p) return p.V .. " + " .. step_text(p.S) .. " < " .. bound_text(p.B) end

-- V, S, B of `for (...; V < B; V += S...)`, from the step's first part.
local function header(loop, first)
  local cond = loop:field("cond")
  if not (loop:field("init") and cond and cond.kind == "binary" and cond.op == "<") then return nil end
  if not (first and first.kind == "assign" and first.op == "+=" and first:field("lhs").kind == "ident") then return nil end
  local V = first:field("lhs"):text()
  if not (cond:field("lhs").kind == "ident" and cond:field("lhs"):text() == V) then return nil end
  return V, first:field("rhs"), cond:field("rhs")
end

local function absent(unit, fn, loop)
  local step, body = loop:field("step"), loop:field("body")
  if not (step and body and body.kind == "compound") then return nil end
  local parts = lib.flatten(step, ",")
  local V, S, B = header(loop, parts[1])
  local list = stmts(body)
  local stage = V and #parts > 1 and staging(list[1])
  if not (stage and call_of(list[2])) then return nil end
  -- The last statement using a staging array, then the first loop after it.
  local last = 2
  for i = 3, #list do
    for _, id in ipairs(idents(list[i])) do for _, nm in ipairs(stage) do if id == nm then last = i end end end
  end
  local at
  for i = last + 1, #list do if LOOPS[list[i].kind] then at = i - 1; break end end
  if not at then return nil end
  local p = { fn = fn, loop = loop, V = V, S = S, B = B, adv = { table.unpack(parts, 2) }, stage = stage,
              decl = list[1], loads = { list[2] }, step_home = step, before = { table.unpack(list, 3, at) },
              point = list[at] }
  if common(unit, p) then return nil end
  return p
end

local function present(unit, fn, loop)
  local step, body, outer = loop:field("step"), loop:field("body"), loop:parent()
  if not (step and body and body.kind == "compound" and outer and outer.kind == "compound") then return nil end
  local V, S, B = header(loop, step)
  if not V then return nil end
  local sib, idx = stmts(outer), nil
  for i, s in ipairs(sib) do if s.id == loop.id then idx = i end end
  local stage = idx and idx > 2 and staging(sib[idx - 2])
  local load = stage and call_of(sib[idx - 1]) and sib[idx - 1]
  if not load then return nil end
  local list = stmts(body)
  for i, s in ipairs(list) do
    local th = s.kind == "if" and not s:field("else") and s:field("then")
    local inner = th and th.kind == "compound" and stmts(th)
    if inner and #inner == 2 and i > 1 and inner[1].kind == "expr_stmt" and call_of(inner[2])
        and lib.norm(inner[2]:text()) == lib.norm(load:text()) then
      local p = { fn = fn, loop = loop, V = V, S = S, B = B, adv = lib.flatten(inner[1]:children()[1], ","),
                  stage = stage, decl = sib[idx - 2], loads = { load, inner[2] }, step_home = inner[1],
                  before = { table.unpack(list, 1, i - 1) }, prefetch = s }
      local later
      for j = i + 1, #list do later = later or LOOPS[list[j].kind] end
      local why = not later and "no loop after" or lib.norm(s:field("cond"):text()) ~= lib.norm(guard(p)) and "guard" or common(unit, p)
      if not why then return p end
      return nil
    end
  end
end

function T.find(unit)
  local sites, count = {}, {}
  for _, fn in ipairs(support.functions(unit)) do
    for loop in fn:body():walk({ "for" }) do
      local a = absent(unit, fn, loop)
      local p = a or present(unit, fn, loop)
      if p then
        local base = fn:name() .. ":" .. call_of(p.loads[1]):field("callee"):text()
        count[base] = (count[base] or 0) + 1
        local key = count[base] > 1 and base .. "#" .. count[base] or base
        local what = string.format("loop over %s: %s fills %s for each step; advances %s", p.V,
          call_of(p.loads[1]):field("callee"):text(), table.concat(p.stage, ", "),
          table.concat((function() local t = {}; for _, x in ipairs(p.adv) do t[#t + 1] = x:text() end; return t end)(), ", "))
        sites[#sites + 1] = support.site(T, unit, fn, { direction = a and "apply" or "undo",
          key = key, line = loop.line, form = p,
          check = what .. "; the advanced names are used only there, the load writes only its staging arrays from masked global reads, the loop stores only to registers and shared memory" })
      end
    end
  end
  return sites
end

function T.apply(site)
  local ok, f = support.same_unit(site, T, "apply")
  if not ok then return nil, f end
  local p, text = site.form, tostring(site.unit)
  local edits = {}
  local db, de = lib.range(p.decl)
  local lb, le = lib.range(p.loads[1])
  local dlb, dle = lib.line(text, db, de)
  local llb, lle = lib.line(text, lb, le)
  local pb, pe = lib.range(p.point)
  local _, ple = lib.line(text, pb, pe, true)
  if not (dlb and llb and ple and dle + 1 == llb) then return support.refuse(site, "the staging lines do not stand alone") end
  local fb = lib.range(p.loop)
  local prag = p.loop:pragmas()
  local at = #prag > 0 and lib.range(prag[1]) or fb
  local ind, bind = lib.indent(text, at), lib.indent(text, db)
  local hoist = ind .. p.decl:text() .. "\n" .. ind .. p.loads[1]:text() .. "\n"
  local advs = {}
  for _, a in ipairs(p.adv) do advs[#advs + 1] = a:text() end
  local _, ste = lib.range(p.loop:field("step"))
  local _, fe = lib.range(lib.flatten(p.loop:field("step"), ",")[1])
  edits[#edits + 1] = { begin = at - #ind, ["end"] = at - #ind - 1, text = hoist }
  edits[#edits + 1] = { begin = fe + 1, ["end"] = ste, text = "" }
  edits[#edits + 1] = { begin = dlb, ["end"] = lle, text = "" }
  edits[#edits + 1] = { begin = ple, ["end"] = ple - 1, text = "\n" .. bind .. "if (" .. guard(p) .. ") {" .. COMMENT .. "\n"
    .. bind .. "  " .. table.concat(advs, ", ") .. ";\n" .. bind .. "  " .. p.loads[1]:text() .. "\n" .. bind .. "}" }
  return support.edit(site, edits)
end

function T.undo(site)
  local ok, f = support.same_unit(site, T, "undo")
  if not ok then return nil, f end
  local p, text = site.form, tostring(site.unit)
  local db, de = lib.range(p.decl)
  local lb, le = lib.range(p.loads[1])
  local dlb = lib.line(text, db, de)
  local llb, lle = lib.line(text, lb, le)
  local ib, ie = lib.range(p.prefetch)
  local ilb, ile = lib.line(text, ib, ie, true)
  local prev = p.before[#p.before]
  local pb, pe = lib.range(prev)
  local _, ple = lib.line(text, pb, pe, true)
  local first, first_e = lib.range(p.before[1])
  local flb = lib.line(text, first, first_e, true)
  if not (dlb and llb and ilb and ple and flb and ple + 1 == ilb) then
    return support.refuse(site, "the prefetch or staging lines do not stand alone")
  end
  local prag = p.before[1].pragmas and p.before[1]:pragmas() or {}
  local at = #prag > 0 and lib.line(text, lib.range(prag[1])) or flb
  local ind = lib.indent(text, first)
  local _, ste = lib.range(p.loop:field("step"))
  return support.edit(site, {
    { begin = dlb, ["end"] = lle, text = "" },
    { begin = ste + 1, ["end"] = ste, text = ", " .. p.step_home:children()[1]:text() },
    { begin = at, ["end"] = at - 1, text = ind .. p.decl:text() .. "\n" .. ind .. p.loads[1]:text() .. "\n" },
    { begin = ple, ["end"] = ile - 1, text = "" },
  })
end

return T
