-- register_tile(TM, TN): a thread computes a TM x TN patch of points (TM
-- along the axis on threadIdx.y, TN along the one on threadIdx.x, each
-- strided by the block so neighbours stay neighbours) with one register
-- accumulator per point, all in ONE pass of the reduction loop: a value
-- loaded for one row of the patch serves all its columns. Points past the
-- bounds compute on clamped coordinates (their loads stay in range) and
-- skip their stores.
local ir = require "klineage.kir.ir"
local geometry = require "klineage.kir.geometry"
local analysis = require "klineage.kir.analysis"
local sizes = require "klineage.kir.sizes"

local M = { name = "register_tile" }

local function bound_terms(guard, names)
  local form, out = guard.form, {}
  local op = form == "return" and "||" or "&&"
  local function walk(e)
    if e.k == "bin" and e.op == op then walk(e.a) walk(e.b) return end
    local t = e.k == "bin" and e or nil
    local a = t and ir.strip_casts(t.a)
    local ok = t and a.k == "var" and names[a.name] and ((form == "return" and t.op == ">=") or (form == "wrap" and t.op == "<"))
    out[#out + 1] = ok and a.name or false
  end
  walk(guard.cond)
  return out
end

-- The per-point names a patch's points can share: { name = { x = bool,
-- y = bool } }, the point axes the value depends on. Only declarations at
-- the top of the code before the loop, of the loop's body or of the code
-- after it (a nested one is out of the other points' scope), never written
-- after (an accumulator is each point's own), with no array type, and no
-- call that is not a plain function of its arguments.
local function sharing(body, loop, x, y)
  local written, tops = {}, {}
  ir.walk(body, function(s)
    for n in pairs(ir.writes(s)) do written[n] = true end
    for _, e in ipairs(ir.exprs(s)) do
      ir.visit(e, function(v)
        if v.k == "un" and v.op == "&" then
          local a = ir.strip_casts(v.a)
          if a.k == "var" then written[a.name] = true end
        end
      end)
    end
  end)
  for _, list in ipairs({ body, loop.stmt.body }) do
    for _, s in ipairs(list) do if s.s == "let" then tops[s] = true end end
  end
  local out = {}
  ir.walk(body, function(s)
    if s.s ~= "let" or s.name == loop.var then return end
    local d = tops[s] and s.init and not written[s.name] and not (s.type or ""):find("%[") and { x = false, y = false } or nil
    if d then
      ir.visit(s.init, function(e)
        if e.k == "call" and (e.fn:match("^atomic") or e.fn:match("^__")) then d = nil end
      end)
    end
    for v in pairs(d and ir.vars(s.init) or {}) do
      if v == x then d.x = true elseif v == y then d.y = true
      elseif out[v] == false then d = nil break
      elseif out[v] then d.x, d.y = d.x or out[v].x, d.y or out[v].y end
    end
    -- a name read before its own declaration (or not at all) stays its point's own
    out[s.name] = d or false
  end)
  for n, d in pairs(out) do if not d then out[n] = nil end end
  return out
end

function M.apply(k, p)
  local tm, tn = p.tm or p[1], p.tn or p[2] or p[1]
  if type(tm) ~= "number" or type(tn) ~= "number" or tm < 1 or tn < 1 or tm * tn < 2 or tm * tn > 64 then
    return nil, "register_tile(TM, TN) with 2 to 64 points a thread"
  end
  if next(k.schedule) then return nil, "register_tile goes right after map" end
  local out = ir.clone(k)
  local ax_y, ax_x = ir.axis_on(out, "y"), ir.axis_on(out, "x")
  if not (ax_x and ax_y and ax_x.block and ax_y.block) then return nil, "register_tile needs output axes on threadIdx.x and threadIdx.y" end
  if not (ax_x.extent and ax_y.extent) then return nil, "the guard does not bound both axes" end
  if not out.guard then return nil, "no bounds guard" end
  for _, t in ipairs(bound_terms(out.guard, { [ax_x.name] = true, [ax_y.name] = true })) do
    if not t then return nil, "the guard holds more than the bounds of the axes: a clamped point would take another path" end
  end
  local a = analysis.analyze(out)
  local at, loop
  for i, s in ipairs(out.body) do
    if s.s == "for" then
      if loop then return nil, "more than one top-level loop" end
      at, loop = i, a.loops[s]
    end
  end
  if not loop or loop.kind ~= "reduce" then return nil, "no top-level reduction loop to share between the points" end
  local point_vars = { [ax_x.name] = true, [ax_y.name] = true }
  local declared = {}
  local bad
  ir.walk(out.body, function(s, depth)
    if s.s == "let" then declared[s.name] = true end
    if s.s == "return" or s.s == "break" or s.s == "continue" or s.s == "raw" then bad = "leaves or hides control flow (" .. s.s .. ")" end
    if s.s == "for" and s ~= loop.stmt and depth == 0 then bad = "a second loop" end
    if s.s == "expr" then bad = "a call statement (an atomic?)" end
  end)
  if bad then return nil, bad end
  for _, e in ipairs({ loop.lo, loop.hi }) do
    for name in pairs(ir.vars(e)) do
      if point_vars[name] or declared[name] then return nil, "the loop's bounds depend on " .. name .. ": the points would disagree on the trip count" end
    end
  end
  local shared_by = sharing(out.body, loop, ax_x.name, ax_y.name)
  -- per point: its coordinates and every name declared in the per-point
  -- code; a value that depends on one axis only (a row's pointer, an
  -- operand loaded for a row) is declared once for its row (its column)
  -- and read by the patch's other points, so that their loads are one
  local function rename(stmts, i, j)
    local ya, xb = ax_y.name .. "_" .. i, ax_x.name .. "_" .. j
    local by = { [ax_y.name] = ir.var(ya), [ax_x.name] = ir.var(xb) }
    local function suffix(name)
      local d = shared_by[name]
      if not d then return "_" .. i .. "_" .. j end
      return "_" .. (d.y and i or 0) .. "_" .. (d.x and j or 0)
    end
    for name in pairs(declared) do
      if name ~= loop.var then by[name] = ir.var(name .. suffix(name)) end
    end
    local c, kept = ir.subst_stmts(stmts, by), {}
    for _, s in ipairs(c) do
      -- a shared value's declaration stays with its first point only
      local name = s.s == "let" and s.name
      if not (name and shared_by[name] and suffix(name) ~= "_" .. i .. "_" .. j) then kept[#kept + 1] = s end
    end
    ir.walk(kept, function(s) if s.s == "let" and s.name ~= loop.var and declared[s.name] then s.name = s.name .. suffix(s.name) end end)
    return kept
  end
  local y0, x0 = ax_y.name .. "0_", ax_x.name .. "0_"
  local ny, nx = ax_y.name, ax_x.name
  local body, pre_loop, in_loop, post = {}, {}, {}, {}
  local function coord(base, ax, i, t)
    if i == 0 then return ir.var(base) end
    local step = i == 1 and ir.copy(ax.block) or ir.bin("*", ir.num(i), ir.copy(ax.block))
    local raw = ir.bin("+", ir.var(base), step)
    return raw
  end
  local live_of = {}
  -- each point's clamped coordinate, for stage: name -> axis dim and step
  local points = {}
  for i = 0, tm - 1 do
    local raw = coord(y0, ax_y, i)
    local name = ax_y.name .. "_" .. i
    body[#body + 1] = { s = "let", type = ax_y.type, name = name, init = { k = "tern", c = ir.bin("<", ir.copy(raw), ir.copy(ax_y.extent)),
      a = raw, b = ir.bin("-", ir.copy(ax_y.extent), ir.num(1)) } }
    live_of["y" .. i] = ir.bin("<", ir.copy(raw), ir.copy(ax_y.extent))
    points[name] = { dim = "y", step = i }
  end
  for j = 0, tn - 1 do
    local raw = coord(x0, ax_x, j)
    local name = ax_x.name .. "_" .. j
    body[#body + 1] = { s = "let", type = ax_x.type, name = name, init = { k = "tern", c = ir.bin("<", ir.copy(raw), ir.copy(ax_x.extent)),
      a = raw, b = ir.bin("-", ir.copy(ax_x.extent), ir.num(1)) } }
    live_of["x" .. j] = ir.bin("<", ir.copy(raw), ir.copy(ax_x.extent))
    points[name] = { dim = "x", step = j }
  end
  local before, after = {}, {}
  for i = 1, at - 1 do before[#before + 1] = out.body[i] end
  for i = at + 1, #out.body do after[#after + 1] = out.body[i] end
  for i = 0, tm - 1 do
    for j = 0, tn - 1 do
      -- a dead point computes (clamped) but writes nothing, before the loop too
      local guarded = {}
      for _, s in ipairs(rename(before, i, j)) do
        if s.s == "let" then pre_loop[#pre_loop + 1] = s else guarded[#guarded + 1] = s end
      end
      if #guarded > 0 then
        pre_loop[#pre_loop + 1] = { s = "if", cond = ir.bin("&&", ir.copy(live_of["y" .. i]), ir.copy(live_of["x" .. j])), then_ = guarded }
      end
      for _, s in ipairs(rename(loop.stmt.body, i, j)) do in_loop[#in_loop + 1] = s end
      local tail = rename(after, i, j)
      -- a dead point keeps its lets (clamped, in range) and drops its stores
      local kept, stores = {}, {}
      for _, s in ipairs(tail) do
        if s.s == "let" then kept[#kept + 1] = s else stores[#stores + 1] = s end
      end
      for _, s in ipairs(kept) do post[#post + 1] = s end
      if #stores > 0 then
        post[#post + 1] = { s = "if", cond = ir.bin("&&", ir.copy(live_of["y" .. i]), ir.copy(live_of["x" .. j])), then_ = stores }
      end
    end
  end
  for _, s in ipairs(pre_loop) do body[#body + 1] = s end
  local nl = ir.copy_stmts({ loop.stmt })[1]
  nl.body = in_loop
  body[#body + 1] = nl
  for _, s in ipairs(post) do body[#body + 1] = s end
  out.body = body
  out.guard = { cond = ir.subst(out.guard.cond, { [ax_y.name] = ir.var(y0), [ax_x.name] = ir.var(x0) }), form = out.guard.form }
  for _, pair in ipairs({ { ax_y, tm, y0 }, { ax_x, tn, x0 } }) do
    local ax, t, base = pair[1], pair[2], pair[3]
    local bid = ir.member("blockIdx", ax.dim)
    if ax.cast then bid = { k = "cast", type = ax.cast, a = bid } end
    ax.expr = ir.bin("+", ir.bin("*", bid, ir.bin("*", ir.copy(ax.block), ir.num(t))), ir.member("threadIdx", ax.dim))
    ax.name = base
    ax.tile = t
    ax.per_block_ann = geometry.simple(ax.threads_ann) .. " * " .. t
  end
  local ok, why = geometry.relaunch(out)
  if not ok then return nil, why end
  out.schedule.register_tile = { tm, tn }
  out.schedule.tile_points = points
  out.applied[#out.applied + 1] = "register_tile"
  return out, string.format("legal: %d x %d points a thread (%s by %s), one pass of the loop over %s with %d accumulators; each point keeps its own sum in its own order (no reassociation); points past the bounds read clamped coordinates and store nothing",
    tm, tn, ny, nx, loop.var, tm * tn)
end

-- 2 x 2, 4 x 2 and 4 x 4; and 8 x 8 where the bench size (k.sizes) makes
-- both threaded axes at least WIDE long (a large contraction, where twice
-- the products a shared-memory read, 16 reads for 64 FMAs against 8 for
-- 16, pays for the registers) and the block has at most MAX_THREADS_8X8
-- threads: its some 128 registers a thread leave no block of 1024 room.
M.WIDE = 512
M.MAX_THREADS_8X8 = 256
function M.candidates(k)
  local out = { { 2, 2 }, { 4, 2 }, { 4, 4 } }
  local x, y = ir.axis_on(k, "x"), ir.axis_on(k, "y")
  local nx = x and x.block and sizes.value(x.extent, k.sizes)
  local ny = y and y.block and sizes.value(y.extent, k.sizes)
  local bx = x and x.block and sizes.value(x.block, k.constants)
  local by = y and y.block and sizes.value(y.block, k.constants)
  if nx and ny and bx and by and nx >= M.WIDE and ny >= M.WIDE and bx * by <= M.MAX_THREADS_8X8 then
    out[#out + 1] = { 8, 8 }
  end
  return out
end

return M
