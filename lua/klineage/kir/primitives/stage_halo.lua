-- stage's second form, for loop-free stencils: an operand read at several
-- constant offsets from the point (u[at - cols], u[at + 1], ...) is loaded
-- once per block, the block's footprint and its halo, into a shared tile;
-- each thread reads its neighbours there. Offsets come from the integer
-- polynomials of the indices (klineage.kir.poly), and a read off the
-- point is allowed only where an early return proves the neighbour is
-- inside the axes' ranges (the boundary branch of jacobi2d, stencil3d).
local ir = require "klineage.kir.ir"
local analysis = require "klineage.kir.analysis"
local poly = require "klineage.kir.poly"
local emit = require "klineage.kir.emit"

local M = {}

local E, LIVE, TID = "e_", "live_", "tid_"

-- Loads outside loops, with the statement index they sit in and whether
-- they are in the early-return branch of that statement.
local function point_loads(body)
  local out, in_loop = {}, {}
  local function visit(stmts, top, branch, loop)
    for i, s in ipairs(stmts) do
      local at = top or i
      for _, e in ipairs(ir.exprs(s)) do
        ir.visit(e, function(x)
          if x.k == "index" and not (s.s == "assign" and e == s.lhs) then
            if loop then in_loop[#in_loop + 1] = x else out[#out + 1] = { expr = x, at = at, branch = branch } end
          end
        end)
      end
      if s.s == "if" then
        local returns = #s.then_ > 0 and s.then_[#s.then_].s == "return"
        visit(s.then_, at, branch or returns, loop)
        if s.else_ then visit(s.else_, at, branch, loop) end
      elseif s.s == "for" then
        visit(s.body, at, branch, true)
      elseif s.s == "block" then
        visit(s.body, at, branch, loop)
      end
    end
  end
  visit(body, nil, false, false)
  return out, in_loop
end

-- How far from each edge the point is known to be after statement `upto`:
-- `if (ax == 0 || ax == E - 1 || ...) { ...; return; }`.
local function margins(body, upto, axes)
  local lo, hi = {}, {}
  for _, a in ipairs(axes) do lo[a.name], hi[a.name] = 0, 0 end
  local by = {}
  for _, a in ipairs(axes) do by[a.name] = a end
  local function term(t)
    if t.k ~= "bin" then return end
    local v = ir.strip_casts(t.a)
    local a = v.k == "var" and by[v.name]
    if not a then return end
    local b = ir.strip_casts(t.b)
    local n = b.k == "num" and math.tointeger(tonumber(b.v))
    if t.op == "==" and n == 0 then lo[a.name] = math.max(lo[a.name], 1)
    elseif t.op == "<" and n then lo[a.name] = math.max(lo[a.name], n)
    elseif (t.op == "==" or t.op == ">=") and b.k == "bin" and b.op == "-" then
      local m = ir.strip_casts(b.b)
      local r = m.k == "num" and math.tointeger(tonumber(m.v))
      if r and ir.text(ir.strip_casts(b.a)) == ir.text(ir.strip_casts(a.extent)) then
        hi[a.name] = math.max(hi[a.name], t.op == "==" and (r == 1 and 1 or 0) or r)
      end
    end
  end
  local function terms(e)
    if e.k == "bin" and e.op == "||" then terms(e.a) terms(e.b) else term(e) end
  end
  for i = 1, upto - 1 do
    local s = body[i]
    if s.s == "if" and not s.else_ and #s.then_ > 0 and s.then_[#s.then_].s == "return" then terms(s.cond) end
  end
  return lo, hi
end

function M.apply(k, p, out)
  local threaded = {}
  local params = {}
  for _, prm in ipairs(out.params) do params[prm.name] = prm end
  for _, ax in ipairs(out.axes) do
    if ax.block then
      if ax.expr then return nil, ax.name .. " is not blockIdx * B + threadIdx" end
      local b = ax.block
      if not (b.k == "num" or (b.k == "var" and not params[b.name])) then
        return nil, "the block size of " .. ax.name .. " (" .. ir.text(b) .. ") is not a compile-time constant: map first"
      end
      if not ax.extent then return nil, "the guard gives no bound for " .. ax.name end
      threaded[#threaded + 1] = ax
    end
  end
  table.sort(threaded, function(x, y) return x.dim > y.dim end) -- z, y, x: x fastest in the tile
  local a = analysis.analyze(out)
  local cx = analysis.context(out)
  local uniform = {}
  for _, s in ipairs(out.uniform) do uniform[s.name] = true end
  local defs = {}
  for name, e in pairs(cx.defs) do if not uniform[name] then defs[name] = e end end
  cx = { defs = defs }
  local written = {}
  for _, x in ipairs(a.accesses) do if x.kind ~= "load" then written[x.array] = true end end
  local loads, looped = point_loads(out.body)
  local looped_arrays = {}
  for _, x in ipairs(looped) do if x.base.k == "var" then looped_arrays[x.base.name] = true end end

  local by_array, order = {}, {}
  for _, l in ipairs(loads) do
    local full = analysis.inline(l.expr, cx)
    if full.base.k == "var" and params[full.base.name] then
      local name = full.base.name
      if not by_array[name] then by_array[name] = {}; order[#order + 1] = name end
      table.insert(by_array[name], { load = l, full = full })
    end
  end
  local want = {}
  for _, n in ipairs(p) do want[n] = true end
  local picks, skipped = {}, {}
  for _, name in ipairs(order) do
    local list = by_array[name]
    local why
    if next(want) and not want[name] then why = "not asked for" end
    if written[name] then why = why or "is written by the kernel too: a staged copy could be stale" end
    if looped_arrays[name] then why = why or "is read inside a loop" end
    local coefs, offsets = nil, {}
    if not why then
      for _, item in ipairs(list) do
        local P = poly.of(item.full.idx)
        if not P then why = "has an index that is not a polynomial of the axes" break end
        local c, rest = {}, P
        for _, ax in ipairs(threaded) do
          local coef
          coef, rest = poly.split(rest, ax.name)
          if not coef or poly.is_zero(coef) then why = "does not move with " .. ax.name break end
          c[ax.name] = coef
        end
        if why then break end
        item.const = rest
        if not coefs then coefs = c else
          for _, ax in ipairs(threaded) do
            if not poly.is_zero(poly.sub(coefs[ax.name], c[ax.name])) then why = "is read with different strides" end
          end
        end
      end
    end
    local ref
    if not why then
      for _, item in ipairs(list) do if not ref and poly.is_zero(item.const) then ref = item end end
      ref = ref or list[1]
      -- the axes by their stride's size, largest first, to read offsets off uniquely
      local ranked = { table.unpack(threaded) }
      for _, ax in ipairs(ranked) do
        local m, f = poly.monomial(coefs[ax.name])
        if not m then why = "has a stride along " .. ax.name .. " that is not one term" end
        ax._m, ax._f = m, f
      end
      if not why then
        table.sort(ranked, function(x, y) return #x._m > #y._m end)
        for _, item in ipairs(list) do
          local diff = poly.sub(item.const, ref.const)
          item.d = {}
          for _, ax in ipairs(ranked) do
            local c = diff[ax._m] or 0
            if c % ax._f ~= 0 then why = "reads at an offset that is not whole steps of the axes" break end
            item.d[ax.name] = c // ax._f
            diff = poly.sub(diff, poly.scale(coefs[ax.name], c // ax._f))
          end
          if why then break end
          if not poly.is_zero(diff) then why = "reads at an offset that is not whole steps of the axes" break end
          local key = {}
          for _, ax in ipairs(threaded) do key[#key + 1] = item.d[ax.name] end
          offsets[table.concat(key, ",")] = true
        end
      end
    end
    if not why then
      local n = 0
      for _ in pairs(offsets) do n = n + 1 end
      if n < 2 then why = "is read at one place per point: no neighbour shares it" end
    end
    if not why then
      for _, item in ipairs(list) do
        local lo, hi = margins(out.body, item.load.at, threaded)
        for _, ax in ipairs(threaded) do
          local d = item.d[ax.name]
          local ok = item.load.branch and d == 0 or (d >= -lo[ax.name] and d <= hi[ax.name])
          if not ok and not why then
            why = string.format("%s may read past the edge along %s: no early return keeps %s %s %d inside",
              ir.text(item.load.expr), ax.name, ax.name, d < 0 and "-" or "+", math.abs(d))
          end
        end
      end
    end
    if why then skipped[#skipped + 1] = name .. " " .. why else picks[#picks + 1] = { array = name, list = list, ref = ref } end
  end
  if #picks == 0 then
    return nil, "nothing to stage" .. (#skipped > 0 and ": " .. table.concat(skipped, "; ") or "")
  end

  local tid_e, nthreads = ir.block_linear_thread(out)
  local pre = { { s = "let", type = "const int", name = TID, init = tid_e } }
  local loads_stmts, repl, described = {}, {}, {}
  for n, pk in ipairs(picks) do
    local lo, hi = {}, {}
    for _, ax in ipairs(threaded) do
      lo[ax.name], hi[ax.name] = 0, 0
      for _, item in ipairs(pk.list) do
        lo[ax.name] = math.min(lo[ax.name], item.d[ax.name])
        hi[ax.name] = math.max(hi[ax.name], item.d[ax.name])
      end
    end
    local name = "s" .. pk.array .. "_" .. n
    local dims, size = {}, nil
    for _, ax in ipairs(threaded) do
      local halo = hi[ax.name] - lo[ax.name]
      local ext = halo > 0 and ir.bin("+", ir.copy(ax.block), ir.num(halo)) or ir.copy(ax.block)
      dims[#dims + 1] = ir.text(ext)
      size = size and ir.bin("*", size, ext) or ext
    end
    local elem = params[pk.array].base
    pre[#pre + 1] = { s = "raw", text = "__shared__ " .. elem .. " " .. name .. "[" .. table.concat(dims, "][") .. "];", writes = {} }
    local body, rest, inside, by = {}, ir.var(E), nil, {}
    for i = #threaded, 1, -1 do
      local ax = threaded[i]
      local halo = hi[ax.name] - lo[ax.name]
      local ext = halo > 0 and ir.bin("+", ir.copy(ax.block), ir.num(halo)) or ir.copy(ax.block)
      local l = "l" .. ax.name .. "_"
      body[#body + 1] = { s = "let", type = "const int", name = l, init = i > 1 and ir.bin("%", ir.copy(rest), ext) or ir.copy(rest) }
      rest = ir.bin("/", rest, ir.copy(ext))
      local shift = lo[ax.name] == 0 and ir.var(l) or ir.bin("-", ir.var(l), ir.num(-lo[ax.name]))
      local g = "g" .. ax.name .. "_"
      body[#body + 1] = { s = "let", type = ax.type, name = g, init = ir.map(emit.axis_expr(ax), function(x)
        if x.k == "member" and x.obj.k == "var" and x.obj.name == "threadIdx" then return shift end
      end) }
      by[ax.name] = ir.var(g)
      local cond = ir.bin("<", ir.var(g), ir.copy(ax.extent))
      if lo[ax.name] < 0 then cond = ir.bin("&&", ir.bin(">=", ir.var(g), ir.num(0)), cond) end
      inside = inside and ir.bin("&&", inside, cond) or cond
    end
    local target = ir.var(name)
    for _, ax in ipairs(threaded) do target = ir.index(target, ir.var("l" .. ax.name .. "_")) end
    body[#body + 1] = { s = "assign", lhs = target, op = "=", rhs = { k = "tern", c = inside, a = ir.subst(pk.ref.full, by),
      b = { k = "cast", type = elem, a = ir.num(0) } } }
    loads_stmts[#loads_stmts + 1] = { s = "for", init = { s = "let", type = "int", name = E, init = ir.var(TID) },
      cond = ir.bin("<", ir.var(E), size), step = { s = "assign", lhs = ir.var(E), op = "+=", rhs = ir.copy(nthreads) }, body = body }
    for _, item in ipairs(pk.list) do
      local own = ir.var(name)
      for _, ax in ipairs(threaded) do
        local off = item.d[ax.name] - lo[ax.name]
        local t = ir.member("threadIdx", ax.dim)
        own = ir.index(own, off == 0 and t or ir.bin("+", t, ir.num(off)))
      end
      repl[item.load.expr] = own
    end
    local spans = {}
    for _, ax in ipairs(threaded) do spans[#spans + 1] = string.format("%s %d..%d", ax.name, lo[ax.name], hi[ax.name]) end
    described[#described + 1] = pk.array .. " (" .. #pk.list .. " reads, offsets " .. table.concat(spans, ", ") .. ")"
  end

  -- the copy walks in the same order as the original: replace by position
  local flat_old, flat_new = {}, {}
  ir.walk(out.body, function(s) for _, e in ipairs(ir.exprs(s)) do ir.visit(e, function(x) flat_old[#flat_old + 1] = x end) end end)
  local new_body = ir.copy_stmts(out.body)
  ir.walk(new_body, function(s) for _, e in ipairs(ir.exprs(s)) do ir.visit(e, function(x) flat_new[#flat_new + 1] = x end) end end)
  for i, x in ipairs(flat_old) do
    local r = repl[x]
    if r then
      local target = flat_new[i]
      for key in pairs(target) do target[key] = nil end
      for key, v in pairs(ir.copy(r)) do target[key] = v end
    end
  end
  local live = ir.live(out.guard)
  local body = { { s = "let", type = "const bool", name = LIVE, init = live } }
  for _, s in ipairs(loads_stmts) do body[#body + 1] = s end
  body[#body + 1] = { s = "expr", e = ir.call("__syncthreads", {}) }
  body[#body + 1] = { s = "if", cond = ir.negate(ir.var(LIVE)), then_ = { { s = "return" } } }
  for _, s in ipairs(new_body) do body[#body + 1] = s end
  out.body, out.guard = body, nil
  out.pre = out.pre or {}
  for _, s in ipairs(pre) do out.pre[#out.pre + 1] = s end
  out.schedule.staged = true
  out.applied[#out.applied + 1] = "stage"
  return out, string.format("legal: the block loads %s once, its footprint and halo, into shared memory before one barrier; every read off the point is inside the axes' ranges (an early return guards the edges), and points outside them read nothing from the tile's padding%s",
    table.concat(described, "; "), #skipped > 0 and "; not staged: " .. table.concat(skipped, "; ") or "")
end

return M
