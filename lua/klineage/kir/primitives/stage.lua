-- stage([ARRAY...] [, tile=T] [, block=TxR]): a top-level reduction loop walks its range
-- in tiles of T; before each tile the block loads, together, every element
-- of a staged operand its threads will read into shared memory, waits,
-- and each thread then reads its own elements from there. An operand is
-- worth staging when its index does not depend on an output axis that has
-- threads in the block: those threads read the same elements (the reuse
-- analysis), so the block loads each once. Covers the tiles of matrix
-- products and the broadcast operands of matrix-vector and all-pairs.
-- An operand read at a threaded axis plus or minus the loop's variable (a
-- convolution's x[t + k], a causal filter's x[t - k]) is staged as a sliding window instead
-- (stage_window.lua): B + T - 1 elements a tile for B x T reads.
--
-- Barriers need every thread of the block: a thread past the guard keeps
-- going with `live_` false (its own loads skipped), helps load the tiles,
-- and returns after the loop.
--
-- Where nothing in the first top-level reduction loop can be staged and it
-- is a perfect nest (lets and one reduction loop a level, bounds the
-- whole block shares), the innermost loop is tiled instead, inside the
-- outer loops every thread runs alike: a 2-D filter's taps slide along x
-- for each of its rows.
--
-- A kernel without a reduction loop takes one of the loop-free forms:
-- stage_halo.lua (a stencil's neighbours in a halo tile), else
-- stage_exchange.lua (a transposed operand through a shared square; a
-- block= parameter asks for it alone).
local ir = require "klineage.kir.ir"
local analysis = require "klineage.kir.analysis"
local poly = require "klineage.kir.poly"
local geometry = require "klineage.kir.geometry"
local window = require "klineage.kir.primitives.stage_window"
local sizes = require "klineage.kir.sizes"

local M = { name = "stage" }

local V0, E, KK, LIVE, BUF, NEXT, U = "t0_", "e_", "kk_", "live_", "buf_", "next_", "u_"
local WE, WA, WV = "we_", "wa_", "wv_" -- a window's element, and the thread and iteration that read it

local function zero_of(type_)
  return { k = "cast", type = type_:gsub("^const%s+", ""), a = ir.num(0) }
end

-- The lists one after another, in a new list.
local function join(...)
  local all = {}
  for _, list in ipairs({ ... }) do for _, x in ipairs(list) do all[#all + 1] = x end end
  return all
end

-- Whether idx walks memory with stride 1 along name.
local function unit_stride(idx, name)
  local p = poly.of(idx)
  local coef = p and poly.split(p, name)
  return coef ~= nil and coef[""] == 1 and next(coef, next(coef)) == nil
end

-- Calls f(load, branch) on every load of e, branch true inside a ?:
-- branch or the right side of && or ||: a read that may not happen.
local function visit_loads(e, branch, f)
  if e.k == "index" then f(e, branch) end
  if e.k == "tern" then
    visit_loads(e.c, branch, f)
    visit_loads(e.a, true, f)
    visit_loads(e.b, true, f)
    return
  end
  if e.k == "bin" and (e.op == "&&" or e.op == "||") then
    visit_loads(e.a, branch, f)
    visit_loads(e.b, true, f)
    return
  end
  for _, key in ipairs({ "obj", "a", "b", "c", "base", "idx" }) do
    if e[key] then visit_loads(e[key], branch, f) end
  end
  for _, x in ipairs(e.args or {}) do visit_loads(x, branch, f) end
end

local function with(list, x)
  local out = { table.unpack(list) }
  out[#out + 1] = x
  return out
end

-- The loop's loads, each with what it is read under: conds (the
-- enclosing ifs' conditions, each as it must hold) and opaque (why that
-- is not all: a nested loop, a ?: branch, the right side of && or ||).
local function loads_in(stmts, out, conds, opaque)
  for _, s in ipairs(stmts) do
    for _, e in ipairs(ir.exprs(s)) do
      if not (s.s == "assign" and e == s.lhs) then
        visit_loads(e, false, function(x, branch)
          local o = opaque or (branch and "a ?: branch or the right side of && or ||") or nil
          out[#out + 1] = { expr = x, conds = conds, opaque = o, conditional = o ~= nil or #conds > 0 }
        end)
      end
    end
    if s.s == "if" then
      loads_in(s.then_, out, with(conds, s.cond), opaque)
      if s.else_ then loads_in(s.else_, out, with(conds, ir.negate(s.cond)), opaque) end
    elseif s.s == "for" then
      loads_in(s.body, out, conds, opaque or "a nested loop")
    elseif s.s == "block" then
      loads_in(s.body, out, conds, opaque)
    end
  end
  return out
end

-- A window element's representative: the live thread furthest along the
-- window's axis that reads it in this tile (wa_), at its iteration (wv_).
-- Appends their statements to `values`, sets `by` to substitute them,
-- and returns the condition under which the element is read at all: some
-- live thread does, in this tile, and the read's own conditions hold.
local function window_read(pk, values, by, inside, cx)
  local w, emit = pk.window, require "klineage.kir.emit"
  local ax = w.axis
  local function at(local_)
    return ir.map(emit.axis_expr(ax), function(x)
      if x.k == "member" and x.obj.k == "var" and x.obj.name == "threadIdx" then return local_ end
    end)
  end
  if w.sign == -1 then
    -- a - v: element we_ is read by the threads wa_ = we_ - (T - 1) + vl
    -- at iterations v0 + vl; the smallest such thread has the smallest
    -- iteration too, so it is live and inside the loop if any is
    local back = ir.num(cx.tile - 1)
    values[#values + 1] = { s = "let", type = "const int", name = WA,
      init = { k = "tern", c = ir.bin(">", ir.var(WE), ir.copy(back)), a = ir.bin("-", ir.var(WE), ir.copy(back)), b = ir.num(0) } }
    values[#values + 1] = { s = "let", type = "const " .. (pk.loop_type or "int"), name = WV,
      init = ir.bin("+", ir.var(V0), ir.bin("+", ir.bin("-", ir.var(WA), ir.var(WE)), ir.copy(back))) }
    if ax.extent then inside = ir.bin("&&", ir.bin("<", at(ir.var(WA)), ir.copy(ax.extent)), inside) end
  else
    -- a + v: the live thread furthest along a, at the earliest iteration
    local last = ir.bin("-", ir.copy(ax.block), ir.num(1))
    values[#values + 1] = { s = "let", type = "int", name = WA,
      init = { k = "tern", c = ir.bin("<", ir.var(WE), ir.copy(last)), a = ir.var(WE), b = ir.copy(last) } }
    if ax.extent then
      values[#values + 1] = { s = "if", cond = ir.bin(">=", at(ir.var(WA)), ir.copy(ax.extent)), then_ = {
        { s = "assign", lhs = ir.var(WA), op = "=",
          rhs = { k = "cast", type = "int", a = ir.bin("-", ir.bin("-", ir.copy(ax.extent), ir.num(1)), at(ir.num(0))) } } } }
    end
    values[#values + 1] = { s = "let", type = "const " .. (pk.loop_type or "int"), name = WV,
      init = ir.bin("-", ir.bin("+", ir.var(V0), ir.var(WE)), ir.var(WA)) }
    inside = ir.bin("&&", ir.bin("&&", ir.bin(">=", ir.var(WA), ir.num(0)),
      ir.bin("<", ir.var(WV), ir.bin("+", ir.var(V0), ir.num(cx.tile)))), inside)
  end
  by[w.name], by[cx.v] = at(ir.var(WA)), ir.var(WV)
  -- an axis without threads past its extent: the whole block is dead
  for name in pairs(ir.vars(pk.full)) do
    local other = ir.axis(cx.kernel, name)
    if other and not other.block and other.extent then
      inside = ir.bin("&&", inside, ir.bin("<", ir.var(name), ir.copy(other.extent)))
    end
  end
  for _, c in ipairs(w.conds) do inside = ir.bin("&&", inside, ir.subst(c, by)) end
  return inside
end

-- The first top-level reduction loop: its place in the body and its analysis.
local function first_reduction(k, a)
  for i, s in ipairs(k.body) do
    local l = s.s == "for" and a.loops[s]
    if l and l.kind == "reduce" then return i, l end
  end
end

local apply_at
local NO_NEST = "no reduction loop nested alone in it"

-- The first top-level reduction loop; where none of its loads can be
-- staged and it is a perfect nest (lets and one reduction loop a level,
-- bounds every thread of the block shares), the innermost loop of the
-- nest: a 2-D filter's row i fixed, its taps j slide.
function M.apply(k, p)
  local nk, why = apply_at(k, p, false)
  if nk or not tostring(why):match("^nothing to stage") then return nk, why end
  local nk2, why2 = apply_at(k, p, true)
  if nk2 then return nk2, why2 end
  if why2 == NO_NEST then return nil, why end
  return nil, why .. "; nor in the nested loop: " .. why2
end

apply_at = function(k, p, nested)
  if k.schedule.points or k.schedule.split or k.schedule.staged or k.schedule.vector then
    return nil, "stage goes first (before split_reduce and coarsen) and once"
  end
  local tile = p.tile or 32
  if type(tile) ~= "number" or tile < 4 or tile > 256 then return nil, "a tile of 4 to 256 iterations" end
  local buffers = p.buffers or 1
  if buffers ~= 1 and buffers ~= 2 then return nil, "buffers=1 or buffers=2 (double buffering)" end
  local out = ir.clone(k)
  local a = analysis.analyze(out)
  local cx = analysis.context(out)
  local uniform = {}
  for _, s in ipairs(out.uniform) do uniform[s.name] = true end
  local params = {}
  for _, prm in ipairs(out.params) do params[prm.name] = prm end
  -- a register tile's points (register_tile): each clamped coordinate is
  -- its axis one block further per step, kept a name so that its loads
  -- are staged per step
  local tile_points = k.schedule.tile_points or {}
  local defs = {}
  for name, e in pairs(cx.defs) do if not uniform[name] and not tile_points[name] then defs[name] = e end end
  cx = { defs = defs }

  local at, loop = first_reduction(out, a)
  -- no reduction to tile: the stencil form (neighbours in a halo tile),
  -- else the exchange form (a transposed operand through a shared square);
  -- a block shape is the exchange's alone
  if not loop then
    if nested then return nil, NO_NEST end
    if p.buffers then return nil, "buffers= stages a reduction loop's tiles, and this kernel has no reduction loop" end
    local exchange = require "klineage.kir.primitives.stage_exchange"
    if p.block then return exchange.apply(k, p, out) end
    local nk, why = require("klineage.kir.primitives.stage_halo").apply(k, p, out)
    if nk then return nk, why end
    local ek, ewhy = exchange.apply(k, p, ir.clone(k))
    if ek then return ek, ewhy end
    return nil, why .. "; nor a tile exchange: " .. ewhy
  end
  -- the nest around the loop to tile, outermost first
  local outers, outer_vars = {}, {}
  if nested then
    while true do
      local inner, ok = nil, true
      for _, st in ipairs(loop.stmt.body) do
        if st.s == "for" then
          if inner then ok = false else inner = st end
        elseif st.s ~= "let" then ok = false end
      end
      if not ok or not inner or a.loops[inner].kind ~= "reduce" then break end
      outers[#outers + 1], outer_vars[loop.var] = loop, true
      loop = a.loops[inner]
    end
    if #outers == 0 then return nil, NO_NEST end
    if buffers == 2 then return nil, "buffers=2 stages a top-level loop, not one in a nest" end
    if next(tile_points) then return nil, "a register tile's points and a nest: stage tiles a top-level loop there" end
  end
  if loop.step ~= 1 then return nil, "the loop over " .. loop.var .. " does not step by 1" end
  local threaded = {}
  for _, ax in ipairs(out.axes) do
    if ax.block then
      if ax.expr and not ax.tile then return nil, ax.name .. " is not blockIdx * B + threadIdx" end
      local b = ax.block
      if not (b.k == "num" or (b.k == "var" and not params[b.name])) then
        return nil, "the block size of " .. ax.name .. " (" .. ir.text(b) .. ") is not a compile-time constant: map first"
      end
      if not ax.extent then return nil, "the guard gives no bound for " .. ax.name end
      threaded[ax.name] = ax
    end
  end
  local n_threaded = 0
  for _ in pairs(threaded) do n_threaded = n_threaded + 1 end
  for _, l in ipairs(join(outers, { loop })) do
    for _, bound in ipairs({ l.lo, l.hi }) do
      for name in pairs(ir.vars(M.inline_all(bound, cx))) do
        if threaded[name] or cx.defs[name] or tile_points[name] then
          return nil, "the bounds of the loop over " .. l.var .. " depend on " .. name ..
            ": threads of a block would disagree on the trip count"
        end
      end
    end
  end
  for i = 1, at - 1 do
    local bad
    ir.walk({ out.body[i] }, function(s) if s.s == "return" then bad = true end end)
    if bad then return nil, "a return before the loop: every thread must reach the barriers" end
  end

  local written = {}
  for _, x in ipairs(a.accesses) do if x.kind ~= "load" then written[x.array] = true end end

  -- the operands to stage
  local want = {}
  for _, name in ipairs(p) do want[name] = true end
  local picks, seen, skipped = {}, {}, {}
  local wcx = { kernel = out, v = loop.var, inline = function(e) return M.inline_all(e, cx) end,
    known = function(name) return params[name] or uniform[name] or outer_vars[name] or (ir.axis(out, name) and not threaded[name]) end }
  for _, l in ipairs(loads_in(loop.stmt.body, {}, {}, nil)) do
    local full = M.inline_all(l.expr, cx)
    local base = full.base
    while base.k == "bin" or base.k == "cast" do base = base.a or base end
    local array = base.k == "var" and base.name
    local key = ir.text(full)
    if array and params[array] and (not next(want) or want[array]) and not seen[key] then
      seen[key] = true
      local deps, why, on = {}, nil, {}
      local vars = ir.vars(full)
      for name in pairs(vars) do
        local tp = tile_points[name]
        local ax = threaded[name] or (tp and ir.axis_on(out, tp.dim))
        if ax then
          if on[ax.dim] then why = "reads two points of the register tile along " .. ax.dim end
          on[ax.dim] = true
          deps[#deps + 1] = { ax = ax, name = name, step = tp and tp.step or 0 }
        elseif name ~= loop.var and not params[name] and not uniform[name] and not outer_vars[name] and not ir.axis(out, name) then
          why = "reads " .. name .. ", which only its own thread knows"
        end
      end
      -- reasons no form stages it, then the tile form's own: a sliding
      -- window (stage_window.lua) may still stage those
      if written[array] then why = "is written by the kernel too: a staged copy could be stale" end
      if not vars[loop.var] then why = "does not move with " .. loop.var end
      local hard = why
      if not why and l.conditional then why = "is read under a condition: staging would read it unconditionally" end
      if not why and #deps == n_threaded then
        why = "no reuse: it depends on every threaded axis, so no two threads of a block share an element"
      end
      local win
      if why and not hard and not next(tile_points) then
        local wwhy
        win, wwhy = window.find(full, l, deps, wcx)
        if win and buffers == 2 then win, wwhy = nil, "a window is staged with buffers=1" end
        if not win then why = why .. " (nor as a window: " .. wwhy .. ")" end
      end
      if win then
        table.sort(win.others, function(x, y) return x.ax.dim > y.ax.dim end)
        picks[#picks + 1] = { load = l.expr, full = full, array = array, window = win, deps = win.others,
                              elem = params[array].base, loop_type = loop.stmt.init.type }
      elseif why then skipped[#skipped + 1] = ir.text(l.expr) .. " " .. why
      else
        table.sort(deps, function(x, y) return x.ax.dim > y.ax.dim end)
        -- the tile is loaded along the operand's unit stride: its rows
        -- along the loop, else along its one threaded axis
        local along_axis = #deps == 1 and not unit_stride(full.idx, loop.var) and unit_stride(full.idx, deps[1].name)
        picks[#picks + 1] = { load = l.expr, full = full, array = array, deps = deps, elem = params[array].base,
                              along_axis = along_axis }
      end
    end
  end
  if #picks == 0 then
    return nil, "nothing to stage" .. (#skipped > 0 and ": " .. table.concat(skipped, "; ") or " (no load of a parameter in the loop)")
  end

  -- shared tiles and the cooperative load
  local v, tid = loop.var, "tid_"
  local tid_e, nthreads = ir.block_linear_thread(out)
  local threads_n = geometry.value(out, ir.text(nthreads))
  if buffers == 2 and not threads_n then return nil, "two stages need the block's thread count known when compiling" end
  local pre, tile_loads, repl = {}, {}, {}
  -- buffers=2: the prologue's loads, the next tile's loads into registers
  -- before the math, and their stores into the other stage after it
  local prologue, prefetch, store_next, registers = {}, {}, {}, {}
  -- the block's threads over a tile of `size` elements: e_ from tid_ by
  -- the thread count; with buffers=2, the u_-th of `count` a thread moves
  local function strided(size, body)
    return { s = "for", init = { s = "let", type = "int", name = E, init = ir.var(tid) },
      cond = ir.bin("<", ir.var(E), size), step = { s = "assign", lhs = ir.var(E), op = "+=", rhs = ir.copy(nthreads) }, body = body }
  end
  local function each(size, count, body)
    return { { s = "pragma", text = "#pragma unroll" },
      { s = "for", init = { s = "let", type = "int", name = U, init = ir.num(0) }, cond = ir.bin("<", ir.var(U), ir.num(count)),
        step = { s = "assign", lhs = ir.var(U), op = "++" },
        body = { { s = "let", type = "const int", name = E, init = ir.bin("+", ir.var(tid), ir.bin("*", ir.var(U), ir.copy(nthreads))) },
          { s = "if", cond = ir.bin("<", ir.var(E), ir.copy(size)), then_ = body } } } }
  end
  pre[#pre + 1] = { s = "let", type = "const int", name = tid, init = tid_e }
  for n, pk in ipairs(picks) do
    local name = "s" .. pk.array .. "_" .. n
    local dims, pad = {}, false
    for _, d in ipairs(pk.deps) do
      dims[#dims + 1] = ir.text(d.ax.block)
      if d.ax.dim == "x" then pad = true end
    end
    -- a tile row read across threadIdx.x, or written across the threads
    -- of a load along the axis, is padded: no bank conflicts
    pad = pad or pk.along_axis
    -- a window: its block's span along the axis and the tile's, overlapped
    local width = pk.window and ir.bin("+", ir.copy(pk.window.axis.block), ir.num(tile - 1))
    dims[#dims + 1] = width and ir.text(width) or tostring(pad and tile + 1 or tile)
    pre[#pre + 1] = { s = "raw", text = "__shared__ " .. pk.elem .. " " .. name .. (buffers == 2 and "[2][" or "[") ..
      table.concat(dims, "][") .. "];", writes = {} }
    local size = width and ir.copy(width) or ir.num(tile)
    for _, d in ipairs(pk.deps) do size = ir.bin("*", ir.copy(d.ax.block), size) end
    -- decode e_ into (local coordinates..., kk_), the unit stride fastest;
    -- then the element's global coordinates and value at the tile t0_
    local decode, values, rest = {}, {}, ir.var(E)
    if width then
      decode[1] = { s = "let", type = "const int", name = WE, init = ir.bin("%", ir.var(E), ir.copy(width)) }
      rest = ir.bin("/", ir.var(E), ir.copy(width))
    elseif pk.along_axis then
      local b = pk.deps[1].ax.block
      decode[1] = { s = "let", type = "const int", name = KK, init = ir.bin("/", ir.var(E), ir.copy(b)) }
      rest = ir.bin("%", ir.var(E), ir.copy(b))
    else
      decode[1] = { s = "let", type = "const int", name = KK, init = ir.bin("%", ir.var(E), ir.num(tile)) }
      rest = ir.bin("/", ir.var(E), ir.num(tile))
    end
    local by, inside = {}, ir.bin("<", width and ir.var(WV) or ir.bin("+", ir.var(V0), ir.var(KK)), ir.copy(loop.hi))
    for i = #pk.deps, 1, -1 do
      local d, ax = pk.deps[i], pk.deps[i].ax
      local l = "l" .. ax.name .. "_"
      decode[#decode + 1] = { s = "let", type = "const int", name = l, init = i > 1 and ir.bin("%", ir.copy(rest), ir.copy(ax.block)) or ir.copy(rest) }
      rest = ir.bin("/", rest, ir.copy(ax.block))
      local g = "g" .. d.name .. "_"
      local gexpr = ir.map(require("klineage.kir.emit").axis_expr(ax), function(x)
        if x.k == "member" and x.obj.k == "var" and x.obj.name == "threadIdx" then return ir.var(l) end
      end)
      if d.step > 0 then gexpr = ir.bin("+", gexpr, ir.bin("*", ir.num(d.step), ir.copy(ax.block))) end
      values[#values + 1] = { s = "let", type = ax.type, name = g, init = gexpr }
      by[d.name] = ir.var(g)
      inside = ir.bin("&&", ir.bin("<", ir.var(g), ir.copy(ax.extent)), inside)
    end
    if width then
      inside = window_read(pk, values, by, inside, { tile = tile, v = v, kernel = out })
    else
      by[v] = ir.bin("+", ir.var(V0), ir.var(KK))
    end
    local value = { k = "tern", c = inside, a = ir.subst(pk.full, by), b = zero_of(pk.elem) }
    local function element(stage_e)
      local t = ir.var(name)
      if stage_e then t = ir.index(t, stage_e) end
      for _, d in ipairs(pk.deps) do t = ir.index(t, ir.var("l" .. d.ax.name .. "_")) end
      return ir.index(t, ir.var(width and WE or KK))
    end
    local own = ir.var(name)
    if buffers == 2 then
      local size_n = geometry.value(out, ir.text(size))
      if not size_n then return nil, "two stages need the tile's size known when compiling" end
      local count = (size_n + threads_n - 1) // threads_n
      local reg = "p" .. pk.array .. "_" .. n
      registers[#registers + 1] = { s = "raw", text = pk.elem .. " " .. reg .. "[" .. count .. "];", writes = {} }
      local first = ir.subst_stmts(values, { [V0] = ir.copy(loop.lo) })
      prologue[#prologue + 1] = strided(size, join(ir.copy_stmts(decode), first,
        { { s = "assign", lhs = element(ir.num(0)), op = "=", rhs = ir.subst(value, { [V0] = ir.copy(loop.lo) }) } }))
      local ahead = { [V0] = ir.bin("+", ir.var(V0), ir.num(tile)) }
      prefetch = join(prefetch, each(size, count, join(ir.copy_stmts(decode), ir.subst_stmts(values, ahead),
        { { s = "assign", lhs = ir.index(ir.var(reg), ir.var(U)), op = "=", rhs = ir.subst(value, ahead) } })))
      store_next = join(store_next, each(size, count, join(ir.copy_stmts(decode),
        { { s = "assign", lhs = element(ir.bin("^", ir.var(BUF), ir.num(1))), op = "=", rhs = ir.index(ir.var(reg), ir.var(U)) } })))
      own = ir.index(own, ir.var(BUF))
    else
      tile_loads[#tile_loads + 1] = strided(size, join(decode, values, { { s = "assign", lhs = element(nil), op = "=", rhs = value } }))
    end
    for _, d in ipairs(pk.deps) do own = ir.index(own, ir.member("threadIdx", d.ax.dim)) end
    local along = ir.bin("-", ir.var(v), ir.var(V0))
    if width and pk.window.sign == -1 then
      along = ir.bin("+", ir.bin("-", ir.member("threadIdx", pk.window.axis.dim), along), ir.num(tile - 1))
    elseif width then
      along = ir.bin("+", ir.member("threadIdx", pk.window.axis.dim), along)
    end
    repl[ir.text(pk.load)] = ir.index(own, along)
  end

  -- the per-point code: live_ instead of the guard, the loop in tiles
  local inner = ir.map_stmts(loop.stmt.body, function(x)
    if x.k == "index" and repl[ir.text(x)] then return ir.copy(repl[ir.text(x)]) end
  end)
  local hi = ir.copy(loop.hi)
  local compute = { s = "for", init = { s = "let", type = loop.stmt.init.type, name = v, init = ir.var(V0) },
    cond = ir.bin("&&", ir.bin("<", ir.var(v), ir.bin("+", ir.var(V0), ir.num(tile))), ir.bin("<", ir.var(v), hi)),
    step = { s = "assign", lhs = ir.var(v), op = "++" }, body = inner }
  local tiles = { s = "for", init = { s = "let", type = loop.stmt.init.type, name = V0, init = ir.copy(loop.lo) },
    cond = ir.bin("<", ir.var(V0), ir.copy(loop.hi)), step = { s = "assign", lhs = ir.var(V0), op = "+=", rhs = ir.num(tile) },
    body = {} }
  local sync = function() return { s = "expr", e = ir.call("__syncthreads", {}) } end
  if buffers == 2 then
    -- one barrier a tile: the stage written after the math was last read
    -- before the previous tile's barrier
    local next_ = ir.bin("<", ir.bin("+", ir.var(V0), ir.num(tile)), ir.copy(loop.hi))
    tiles.body = { { s = "let", type = "const bool", name = NEXT, init = next_ },
      { s = "if", cond = ir.var(NEXT), then_ = prefetch },
      { s = "if", cond = ir.var(LIVE), then_ = { compute } },
      { s = "if", cond = ir.var(NEXT), then_ = store_next },
      sync(),
      { s = "assign", lhs = ir.var(BUF), op = "^=", rhs = ir.num(1) } }
  else
    for _, t in ipairs(tile_loads) do tiles.body[#tiles.body + 1] = t end
    tiles.body[#tiles.body + 1] = sync()
    tiles.body[#tiles.body + 1] = { s = "if", cond = ir.var(LIVE), then_ = { compute } }
    tiles.body[#tiles.body + 1] = sync()
  end

  -- a declaration every thread runs: only a value that reads memory waits for live_
  local function for_all(st)
    local c = ir.copy_stmts({ st })[1]
    local loads = false
    if c.init then ir.visit(c.init, function(x) if x.k == "index" or x.k == "call" then loads = true end end) end
    if loads then c.init = { k = "tern", c = ir.var(LIVE), a = c.init, b = zero_of(c.type) } end
    return c
  end
  local body = { { s = "let", type = "const bool", name = LIVE, init = ir.live(out.guard) } }
  for i = 1, at - 1 do
    local s = out.body[i]
    if s.s == "let" then
      body[#body + 1] = for_all(s)
    else
      body[#body + 1] = { s = "if", cond = ir.var(LIVE), then_ = { s } }
    end
  end
  -- a nest: every thread runs its outer loops (the barriers are inside),
  -- their declarations as before the loop
  for d = #outers, 1, -1 do
    local o, inner = outers[d], (outers[d + 1] or loop).stmt
    local c = ir.copy_stmts({ o.stmt })[1]
    local nbody = {}
    for _, st in ipairs(o.stmt.body) do nbody[#nbody + 1] = st == inner and tiles or for_all(st) end
    c.body = nbody
    tiles = c
  end
  if buffers == 2 then
    for _, st in ipairs(prologue) do body[#body + 1] = st end
    body[#body + 1] = sync()
    for _, st in ipairs(registers) do body[#body + 1] = st end
    body[#body + 1] = { s = "let", type = "int", name = BUF, init = ir.num(0) }
  end
  body[#body + 1] = tiles
  body[#body + 1] = { s = "if", cond = { k = "un", op = "!", a = ir.var(LIVE) }, then_ = { { s = "return" } } }
  for i = at + 1, #out.body do body[#body + 1] = out.body[i] end
  out.body, out.guard = body, nil
  out.pre = out.pre or {}
  for _, s in ipairs(pre) do out.pre[#out.pre + 1] = s end
  out.schedule.staged = true
  out.applied[#out.applied + 1] = "stage"
  local names = {}
  for _, pk in ipairs(picks) do
    local w = pk.window
    if w then
      names[#names + 1] = string.format("%s (a window of %s sliding %salong %s: %s + %d elements a tile for %s x %d reads%s)",
        ir.text(pk.load), pk.array, w.sign == -1 and "back " or "", w.name, ir.text(w.axis.block), tile - 1,
        ir.text(w.axis.block), tile, #w.conds > 0 and "; each loaded where a live thread reads it, under its conditions, which see " ..
          w.name .. " and " .. v .. " only as their " .. (w.sign == -1 and "difference" or "sum") or "")
    else
      local reuse = {}
      for n, ax in pairs(threaded) do
        local dep = false
        for _, d in ipairs(pk.deps) do if d.ax == ax then dep = true end end
        if not dep then reuse[#reuse + 1] = n end
      end
      table.sort(reuse)
      names[#names + 1] = ir.text(pk.load) .. " (shared by the threads along " .. table.concat(reuse, ", ") .. ")"
    end
  end
  local how = buffers == 2 and "in two stages: the next tile's loads go to registers before the math and to the other stage after it, one barrier a tile"
    or "once per tile between barriers"
  local around = {}
  for _, o in ipairs(outers) do around[#around + 1] = o.var end
  return out, string.format("legal: the loop over %s%s runs in tiles of %d with block-uniform bounds; the block loads %s %s; every thread reaches the barriers (past the guard it only helps load); the order of the sum is unchanged%s",
    v, #around > 0 and " (nested in the loop over " .. table.concat(around, ", then ") .. ", which every thread of the block runs alike)" or "",
    tile, table.concat(names, ", "), how, #skipped > 0 and "; not staged: " .. table.concat(skipped, "; ") or "")
end

function M.inline_all(e, cx) return analysis.inline(e, cx) end

-- Tiles of 32 and 16, and 32 double buffered; where the bench size
-- (k.sizes) makes the first top-level reduction 16 or shorter, tiles of
-- its length (a power of two, at least 4) instead: a 16-long product in
-- tiles of 32 loads as many zeros as values.
function M.candidates(k)
  local len
  if k.sizes then
    local ok, a = pcall(analysis.analyze, k)
    local loop = ok and select(2, first_reduction(k, a))
    len = loop and sizes.trips(loop, k.sizes)
  end
  if not len or len > 16 then return { {}, { tile = 16 }, { buffers = 2 } } end
  local t = 4
  while t < len do t = t * 2 end
  return { { tile = t }, { tile = t, buffers = 2 } }
end

return M
