-- stage's third form, for coalescing: a loop-free kernel that stores along
-- one output axis S (unit stride in the store) but reads an operand along
-- another, L (unit stride in the load): a transpose or an axis permutation.
-- Under any mapping one of the two global accesses is then strided. Here a
-- block takes a tile x tile square of (S, L) points: its threads load the
-- operand with lanes along L into a shared array (rows padded by one, so
-- the column reads hit distinct banks), wait, and each thread reads its own
-- element back and stores with lanes along S. A block of tile x R threads
-- walks the square in tile / R rows a thread: the rows are coarsen's
-- points, so the guard reads `continue` there and comes after the barrier,
-- which every thread of the block therefore reaches.
local ir = require "klineage.kir.ir"
local analysis = require "klineage.kir.analysis"
local geometry = require "klineage.kir.geometry"
local launch = require "klineage.kir.launch"

local M = {}

local POINT = "u_"
local SHARED_LIMIT = 48 * 1024 -- the static __shared__ a block may declare
local BYTES = { char = 1, ["unsigned char"] = 1, short = 2, ["unsigned short"] = 2, half = 2, __half = 2,
  __nv_bfloat16 = 2, int = 4, ["unsigned int"] = 4, unsigned = 4, float = 4, long = 8, ["long long"] = 8,
  ["unsigned long"] = 8, ["unsigned long long"] = 8, double = 8, float2 = 8, int2 = 8, float4 = 16, double2 = 16 }

-- Every subscript the per-point code reads, and whether it is read only
-- under a condition (an if branch, a ?: branch, the right side of && or ||).
local function reads(stmts, out, cond)
  for _, s in ipairs(stmts) do
    for _, e in ipairs(ir.exprs(s)) do
      local store = s.s == "assign" and e == s.lhs and e.k == "index" and s.op == "=" and e or nil
      local function visit(x, c)
        if x.k == "index" and x ~= store then out[#out + 1] = { expr = x, conditional = c } end
        if x.k == "tern" then
          visit(x.c, c) visit(x.a, true) visit(x.b, true)
          return
        end
        if x.k == "bin" and (x.op == "&&" or x.op == "||") then
          visit(x.a, c) visit(x.b, true)
          return
        end
        for _, key in ipairs({ "obj", "a", "b", "c", "base", "idx" }) do
          if x[key] then visit(x[key], c) end
        end
        for _, arg in ipairs(x.args or {}) do visit(arg, c) end
      end
      visit(e, cond)
    end
    if s.s == "if" then
      reads(s.then_, out, true)
      if s.else_ then reads(s.else_, out, true) end
    elseif s.s == "block" then
      reads(s.body, out, cond)
    end
  end
  return out
end

-- The one output axis an affine access is unit-stride along, or nil and why.
local function unit_axis(x, axes)
  if x.indirect then return nil, "has an indirect index" end
  if not x.coefs then return nil, "has an index that is not affine in the output axes" end
  local unit
  for d, c in pairs(x.coefs) do
    if not axes[d] then return nil, "moves with " .. d .. ", which is not an output axis" end
    if c == "1" then
      if unit then return nil, "is unit-stride along two axes (" .. unit .. ", " .. d .. ")" end
      unit = d
    end
  end
  if not unit then return nil, "is unit-stride along no output axis" end
  return unit
end

function M.apply(_, p, out)
  local tile = p.tile or 32
  if type(tile) ~= "number" or tile < 8 or tile > 64 or tile % 8 ~= 0 then
    return nil, "a tile exchange takes a tile of 8 to 64, a multiple of 8"
  end
  local block = p.block or { tile, 8 }
  local bx, by = block[1], block[2] or 1
  if bx ~= tile then return nil, string.format("the block's x size %d is not the tile %d: a warp's lanes walk one tile row", bx, tile) end
  if (block[3] or 1) ~= 1 then return nil, "a tile exchange takes a 2-D block" end
  if tile % by ~= 0 then return nil, string.format("the block's y size %d does not divide the tile %d: each thread takes tile / y rows", by, tile) end
  if (bx * by) % 32 ~= 0 or bx * by > 1024 then return nil, string.format("a block of %d threads is not whole warps up to 1024", bx * by) end

  local bad
  ir.walk(out.body, function(s)
    if s.s == "for" or s.s == "raw" then bad = bad or "a loop in the per-point code: the tile exchange takes loop-free kernels" end
    if s.s == "return" then bad = bad or "a return in the per-point code: the tile would load what a point may skip" end
    if s.s == "let" and s.name == POINT then bad = bad or "the kernel already names " .. POINT end
    for n in pairs(ir.writes(s)) do
      if ir.axis(out, n) then bad = bad or "the per-point code writes its coordinate " .. n end
    end
  end)
  if bad then return nil, bad end

  local axes, params, uniform = {}, {}, {}
  for _, ax in ipairs(out.axes) do axes[ax.name] = ax end
  for _, prm in ipairs(out.params) do params[prm.name] = prm end
  for _, s in ipairs(out.uniform) do uniform[s.name] = true end
  local a = analysis.analyze(out)

  -- S: the stores' unit-stride axis
  local S
  for _, x in ipairs(a.accesses) do
    if x.kind == "atomic" then return nil, "an atomic update (" .. x.text .. "): the tile exchange takes plain stores" end
    if x.kind == "store" then
      local unit, why = unit_axis(x, axes)
      if not unit then return nil, "the store " .. x.text .. " " .. why .. ": no lanes store it contiguously" end
      if S and S ~= unit then return nil, "the stores are contiguous along different axes (" .. S .. ", " .. unit .. ")" end
      S = unit
    end
  end
  if not S then return nil, "no store to coalesce" end

  -- the operands read along another axis than S, all along the same L
  local cx = analysis.context(out)
  local defs = {}
  for name, e in pairs(cx.defs) do if not uniform[name] then defs[name] = e end end
  cx = { defs = defs }
  local seen_reads = {}
  for _, r in ipairs(reads(out.body, {}, false)) do
    local t = ir.text(r.expr)
    local prev = seen_reads[t]
    -- read unconditionally once is enough: every live point reads it
    if prev then prev.conditional = prev.conditional and r.conditional else seen_reads[t] = r end
  end
  local written, places = {}, {}
  for _, x in ipairs(a.accesses) do
    if x.kind ~= "load" then written[x.array] = true
    elseif seen_reads[x.text] then
      places[x.array] = places[x.array] or {}
      places[x.array][ir.text(analysis.inline(seen_reads[x.text].expr, cx))] = true
    end
  end
  local want = {}
  for _, name in ipairs(p) do want[name] = true end
  local picks, skipped, done, L = {}, {}, {}, nil
  for _, x in ipairs(a.accesses) do
    local r = seen_reads[x.text]
    if x.kind == "load" and r and params[x.array] and not done[x.text] and (not next(want) or want[x.array]) then
      done[x.text] = true
      local unit, why = unit_axis(x, axes)
      if unit and written[x.array] then why = "is written by the kernel too: a staged copy could be stale" end
      if unit and not why and unit == S then why = "is unit-stride along " .. S .. ", like the store: coalesced already" end
      if unit and not why and not x.coefs[S] then why = "does not move with " .. S .. ": lanes along it read one element, a broadcast" end
      if unit and not why and L and unit ~= L then why = "is contiguous along " .. unit .. ", the other exchanged operands along " .. L end
      if not why and r.conditional then why = "is read under a condition: the tile would read it unconditionally" end
      local n = 0
      for _ in pairs(places[x.array] or {}) do n = n + 1 end
      if not why and n > 1 then why = "is read at several places: a tile holds one element a point" end
      local full = analysis.inline(r.expr, cx)
      if not why then
        for name in pairs(ir.vars(full)) do
          if not (axes[name] or params[name] or uniform[name]) and not why then
            why = "reads " .. name .. ", which only its own thread knows"
          end
        end
      end
      if why then skipped[#skipped + 1] = x.text .. " " .. why
      else
        L = unit
        picks[#picks + 1] = { load = x.text, full = full, array = x.array, elem = (params[x.array].base:gsub("^const%s+", "")) }
      end
    end
  end
  if #picks == 0 then
    local asked = {}
    for _, name in ipairs(p) do asked[#asked + 1] = name end
    return nil, "nothing to exchange: " .. (#skipped > 0 and table.concat(skipped, "; ")
      or "no load of " .. (#asked > 0 and table.concat(asked, ", ") or "a parameter") .. " in the per-point code")
  end
  local bytes = 0
  for _, pk in ipairs(picks) do bytes = bytes + tile * (tile + 1) * (BYTES[pk.elem] or 16) end
  if bytes > SHARED_LIMIT then return nil, string.format("the tiles take %d bytes of shared memory: more than %d", bytes, SHARED_LIMIT) end

  -- the square's two sides need a bound each: partial tiles at the edges
  local sx, lx = axes[S], axes[L]
  local guard = out.guard and { cond = ir.copy(out.guard.cond), form = out.guard.form }
  for _, ax in ipairs({ sx, lx }) do
    if ax.extent then
      if not ax.extent_ann then return nil, "the bound of " .. ax.name .. " cannot be written in the launch line" end
    elseif ax.count then
      -- no guard says it (the grid covered it exactly): a tile may run past
      ax.extent_ann = launch.annotation_of(out, ax.count)
      if not ax.extent_ann then return nil, "the range of " .. ax.name .. " cannot be written in the launch line" end
      local v = ir.var(ax.name)
      if not guard then guard = { cond = ir.bin(">=", v, ir.copy(ax.count)), form = "return" }
      elseif guard.form == "return" then guard.cond = ir.bin("||", guard.cond, ir.bin(">=", v, ir.copy(ax.count)))
      else guard.cond = ir.bin("&&", guard.cond, ir.bin("<", v, ir.copy(ax.count))) end
    else
      return nil, "the guard gives no bound for " .. ax.name .. ": a partial tile at the edge would run past it"
    end
  end
  local others = {}
  for _, ax in ipairs(out.axes) do
    if ax ~= sx and ax ~= lx then
      if ax.block and not ax.extent_ann then
        return nil, ax.name .. " has threads but no bound the launch line can write: it cannot move to blockIdx.z alone"
      end
      others[#others + 1] = ax
    end
  end

  local function bid(ax, d)
    local b = ir.member("blockIdx", d)
    if ax.cast then b = { k = "cast", type = ax.cast, a = b } end
    return b
  end
  local function row() return ir.bin("+", ir.bin("*", ir.var(POINT), ir.num(by)), ir.member("threadIdx", "y")) end
  local function lanes(ax, d) return ir.bin("+", ir.bin("*", bid(ax, d), ir.num(tile)), ir.member("threadIdx", "x")) end
  local function rows(ax, d)
    return ir.bin("+", ir.bin("+", ir.bin("*", bid(ax, d), ir.num(tile)), ir.bin("*", ir.var(POINT), ir.num(by))),
      ir.member("threadIdx", "y"))
  end

  -- the load: lanes along L, a row of the tile per step; tile[S][L]
  local live = guard.form == "return" and ir.negate(guard.cond) or ir.copy(guard.cond)
  local used = ir.vars(live)
  for _, pk in ipairs(picks) do ir.vars(pk.full, used) end
  local load_body = {}
  for _, ax in ipairs(out.axes) do
    if used[ax.name] then
      local e = ax == lx and lanes(ax, "y") or ax == sx and rows(ax, "x") or bid(ax, "z")
      load_body[#load_body + 1] = { s = "let", type = ax.type, name = ax.name, init = e }
    end
  end
  local pre, copies, repl = {}, {}, {}
  for n, pk in ipairs(picks) do
    local name = "s" .. pk.array .. "_" .. n
    if params[name] or defs[name] or uniform[name] then return nil, "the kernel already names " .. name end
    -- one padding element a row: the store side reads a column
    pre[#pre + 1] = { s = "raw", text = string.format("__shared__ %s %s[%d][%d + 1];", pk.elem, name, tile, tile), writes = {} }
    copies[#copies + 1] = { s = "assign", lhs = ir.index(ir.index(ir.var(name), row()), ir.member("threadIdx", "x")), op = "=", rhs = pk.full }
    repl[pk.load] = ir.index(ir.index(ir.var(name), ir.member("threadIdx", "x")), row())
  end
  load_body[#load_body + 1] = { s = "if", cond = live, then_ = copies }
  pre[#pre + 1] = { s = "for", init = { s = "let", type = "int", name = POINT, init = ir.num(0) },
    cond = ir.bin("<", ir.var(POINT), ir.num(tile // by)), step = { s = "assign", lhs = ir.var(POINT), op = "++" }, body = load_body }
  pre[#pre + 1] = { s = "expr", e = ir.call("__syncthreads", {}) }

  -- the store: lanes along S, the same rows as the thread's points
  out.body = ir.map_stmts(out.body, function(x)
    if x.k == "index" and repl[ir.text(x)] then return ir.copy(repl[ir.text(x)]) end
  end)
  sx.dim, sx.expr, sx.block = "x", lanes(sx, "x"), ir.num(tile)
  sx.threads_ann, sx.per_block_ann = tostring(tile), tostring(tile)
  lx.dim, lx.expr, lx.block = "y", rows(lx, "y"), ir.num(by)
  lx.threads_ann, lx.per_block_ann = tostring(by), tostring(tile)
  for _, ax in ipairs(others) do
    if ax.block then ax.grid_ann = ax.extent_ann end
    ax.dim, ax.expr, ax.block, ax.threads_ann, ax.per_block_ann = "z", nil, nil, "1", "1"
  end
  out.guard = guard
  out.pre = out.pre or {}
  for _, s in ipairs(pre) do out.pre[#out.pre + 1] = s end
  out.schedule.points = { var = POINT, count = tile // by, axis = lx.name }
  out.schedule.staged = true
  local ok, why = geometry.relaunch(out)
  if not ok then return nil, why end
  out.applied[#out.applied + 1] = "stage"
  local loads, arrays = {}, {}
  for _, pk in ipairs(picks) do loads[#loads + 1] = pk.load; arrays[#arrays + 1] = pk.array end
  return out, string.format("legal: %s read along %s but stored along %s: the block exchanges %s through shared memory, a %dx%d square of (%s, %s) with rows padded by one against bank conflicts, loaded with lanes along %s and stored with lanes along %s, so both global accesses are coalesced; a %dx%d block takes %d row%s of it a thread; every thread reaches the one barrier (the guard comes after it), and a partial square at an edge loads and stores only points inside the guard%s",
    table.concat(loads, ", "), L, S, table.concat(arrays, ", "), tile, tile, S, L, L, S, tile, by, tile // by, tile // by == 1 and "" or "s",
    #skipped > 0 and "; not exchanged: " .. table.concat(skipped, "; ") or "")
end

return M
