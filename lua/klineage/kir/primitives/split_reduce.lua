-- split_reduce(warp [, wpb=W] [, lanes=L]) | split_reduce(block=B)
-- (split_reduce(y=R): apply_y below): the output on threadIdx.x gets a
-- warp (W warps a block), a group of L lanes of a warp (L = 2 to 16: 32 / L
-- outputs a warp, for reductions too short to keep 32 lanes busy, as the
-- rows of a sparse matrix), or a whole block of B threads. Each top-level loop of the per-point code is split over them:
-- a reduction (+, max, min, argmax/argmin with the index tie-break) runs
-- over a strided share of the range and its partial results meet through
-- an xor butterfly of shuffles (all lanes end with the same value), then,
-- for a block, shared memory in warp order; a map loop (stores that move
-- with its variable) simply shares its iterations. Code outside the loops
-- runs in every lane on the same values: identical stores, no atomics.
--
-- split_reduce(block=B, blocks=K): K blocks an output, for outputs too few
-- to fill the device (a sum of one long array, a short wide matrix's
-- rows). The blocks take strided shares of the loop along blockIdx.y; each
-- block's partial goes to a slot of a file-scope array, and the last block
-- to count itself in (a device-wide atomic count after a fence) merges
-- the K partials in block order, resets the count for the next launch and
-- runs the code after the loop. Outputs past the slots (SLOTS / K of
-- them) are reduced by one block alone, as split_reduce(block=B) does.
local ir = require "klineage.kir.ir"
local geometry = require "klineage.kir.geometry"
local analysis = require "klineage.kir.analysis"

local M = { name = "split_reduce" }

local LANE, OFF, WARP, LIVE = "lane_", "o_", "warp_", "live_"
local SHARE, STRIDE, ALONE, LAST, CHUNK = "share_", "stride_", "alone_", "last_", "c_"
-- the file-scope slots of split_reduce(blocks=K): partials and counts
M.SLOTS = 65536
local PART_G, DONE_G = "kl_split_part_", "kl_split_done_"
local FULL = "0xffffffffu"
local GROUP = { [2] = true, [4] = true, [8] = true, [16] = true, [32] = true }

local function let_type(k, name)
  local t
  ir.walk(k.body, function(s) if s.s == "let" and s.name == name then t = s.type end end)
  return t
end

local function is_float(t) return t and (t:match("float") or t:match("double")) end

local function shfl(e, name) return ir.call("__shfl_xor_sync", { ir.var(FULL), e or ir.var(name), ir.var(OFF) }) end

local function assign(lhs, op, rhs) return { s = "assign", lhs = ir.var(lhs), op = op, rhs = rhs } end

-- The statements that merge `other_*` partials into the accumulators.
local function merge(acc, types, other)
  local op = acc.op
  if op == "+" then return { assign(acc.name, "+=", other(acc.name)) } end
  if op == "max" or op == "min" then
    local fn = is_float(types[acc.name]) and (op == "max" and "fmaxf" or "fminf") or op
    return { assign(acc.name, "=", ir.call(fn, { ir.var(acc.name), other(acc.name) })) }
  end
  local better = op == "argmax" and ">" or "<"
  if acc.key and acc.val then
    local ov, oi = other(acc.val), other(acc.idx)
    local cond = ir.bin("||", ir.bin(better, ov, ir.var(acc.val)),
      ir.bin("&&", ir.bin("==", ov, ir.var(acc.val)), ir.bin("<", oi, ir.var(acc.idx))))
    return { { s = "if", cond = cond, then_ = { assign(acc.val, "=", ir.copy(ov)), assign(acc.idx, "=", ir.copy(oi)) } } }
  end
  local oi = other(acc.idx)
  local mine = ir.subst(acc.key, { [acc.var] = ir.var(acc.idx) })
  local theirs = ir.subst(acc.key, { [acc.var] = oi })
  local cond = ir.bin("||", ir.bin(better, theirs, mine),
    ir.bin("&&", ir.bin("==", ir.copy(theirs), ir.copy(mine)), ir.bin("<", ir.copy(oi), ir.var(acc.idx))))
  return { { s = "if", cond = cond, then_ = { assign(acc.idx, "=", ir.copy(oi)) } } }
end

-- The accumulators that travel: a value/index pair travels as both.
local function travelling(accs)
  local out = {}
  for _, a in ipairs(accs) do
    if not a.partner then out[#out + 1] = a end
  end
  return out
end

local function names_of(acc)
  if acc.val then return { acc.val, acc.idx } end
  if acc.idx then return { acc.idx } end
  return { acc.name }
end

local function warp_combine(acc, types, width, live)
  local lets, body = {}, {}
  local other = {}
  for _, n in ipairs(names_of(acc)) do
    if acc.op == "+" or acc.op == "max" or acc.op == "min" then
      other[n] = shfl(ir.var(n))
    else
      lets[#lets + 1] = { s = "let", type = types[n], name = n .. "_o", init = shfl(ir.var(n)) }
      other[n] = ir.var(n .. "_o")
    end
  end
  for _, s in ipairs(lets) do body[#body + 1] = s end
  local merged = merge(acc, types, function(n) return ir.copy(other[n]) end)
  -- an argmax's merge may read its key at the lanes' indices: a group past
  -- the bounds shuffles (its neighbours wait on it) but reads nothing
  if live and #lets > 0 then merged = { { s = "if", cond = ir.var(live), then_ = merged } } end
  for _, s in ipairs(merged) do body[#body + 1] = s end
  -- xor offsets below the group's width stay inside the group
  local loop_init = { s = "let", type = "int", name = OFF, init = ir.num((width or 32) // 2) }
  return { s = "for", init = loop_init, cond = ir.bin(">", ir.var(OFF), ir.num(0)),
    step = { s = "assign", lhs = ir.var(OFF), op = "/=", rhs = ir.num(2) }, body = body }
end

-- (privatize's one-target form sums a warp with the same butterfly)
M.warp_combine = warp_combine

local function block_combine(acc, types, warps, shared)
  local out = {}
  local names = names_of(acc)
  local first = {}
  for _, n in ipairs(names) do
    first[#first + 1] = { s = "assign", lhs = ir.index(ir.var(shared[n]), ir.var(WARP)), op = "=", rhs = ir.var(n) }
  end
  out[#out + 1] = { s = "if", cond = ir.bin("==", ir.bin("%", ir.var(LANE), ir.num(32)), ir.num(0)), then_ = first }
  out[#out + 1] = { s = "expr", e = ir.call("__syncthreads", {}) }
  for _, n in ipairs(names) do
    out[#out + 1] = assign(n, "=", ir.index(ir.var(shared[n]), ir.num(0)))
  end
  local w = "w_"
  local body = merge(acc, types, function(n) return ir.index(ir.var(shared[n]), ir.var(w)) end)
  out[#out + 1] = { s = "for", init = { s = "let", type = "int", name = w, init = ir.num(1) },
    cond = ir.bin("<", ir.var(w), ir.num(warps)), step = { s = "assign", lhs = ir.var(w), op = "++" }, body = body }
  out[#out + 1] = { s = "expr", e = ir.call("__syncthreads", {}) }
  return out
end

-- The kernel's analysis, or nil and why when a name the split adds is taken
-- or a lane could read what another already stored (lanes run the code
-- outside the loops together).
local function lanes_apart(k, names)
  for _, n in ipairs(names) do
    local clash
    ir.walk(k.body, function(s) if s.s == "let" and s.name == n then clash = true end end)
    if clash then return nil, "the kernel already names " .. n end
  end
  local a = analysis.analyze(k)
  local stored, read = {}, {}
  for _, x in ipairs(a.accesses) do
    if x.kind == "load" then read[x.array] = true else stored[x.array] = true end
  end
  for name in pairs(stored) do
    if read[name] then return nil, name .. " is both read and written: a lane could read what another lane already stored" end
  end
  return a
end

-- The reason's words on order: where an argmax/argmin's ties go, and
-- whether a floating-point sum is reassociated.
local function order_words(a, types)
  local argbest, reassoc = false, false
  for _, l in ipairs(a.loops.list) do
    for _, acc in ipairs(l.accs) do
      if acc.op == "argmax" or acc.op == "argmin" then argbest = true end
      if acc.op == "+" and is_float(types[acc.name]) then reassoc = true end
    end
  end
  return argbest and "; ties go to the smaller index, as the sequential loop's first hit" or "",
    reassoc and "this reassociates a floating-point +: rounding changes, the gate's tolerance decides" or "no floating-point sum is reassociated"
end

-- A declaration that reads memory, made to read nothing in a thread past
-- the bounds (`live_ ? init : 0`): that thread stays for the shuffles or
-- the barrier its neighbours wait on. Others are returned as they are.
local function live_only(s)
  local reads
  if s.init then ir.visit(s.init, function(e) if e.k == "index" or e.k == "call" then reads = true end end) end
  if not reads then return s end
  local c = ir.copy_stmts({ s })[1]
  c.init = { k = "tern", c = ir.var(LIVE), a = c.init, b = ir.num(0) }
  return c
end

-- A copy of the loop that lane `lane` of `step` runs: its strided share.
-- (step: a number, or the name of a variable that holds it)
local function lane_share(stmt, var, lane, step)
  local c = ir.copy_stmts({ stmt })[1]
  local lo = c.init.init
  c.init.init = (lo.k == "num" and lo.v == "0") and ir.var(lane) or ir.bin("+", lo, ir.var(lane))
  c.step = { s = "assign", lhs = ir.var(var), op = "+=", rhs = type(step) == "number" and ir.num(step) or ir.var(step) }
  return c
end

-- split_reduce(blocks=K): after the block's merge, thread 0 files the
-- partial in the output's slot and counts the block in; the last block of
-- the K merges the slots in block order (volatile reads: the partials are
-- other blocks' stores, past this block's L1) and resets the count.
local function across_blocks(accs, types, count, n_loop)
  local slot = ir.bin("*", ir.member("blockIdx", "x"), ir.num(count))
  local file, globals = {}, {}
  local filed = {}
  for _, acc in ipairs(accs) do
    for _, n in ipairs(names_of(acc)) do
      local g = PART_G .. n .. "_" .. n_loop
      filed[n] = g
      globals[#globals + 1] = "__device__ " .. types[n]:gsub("^const%s+", "") .. " " .. g .. "[" .. M.SLOTS .. "];"
      file[#file + 1] = { s = "assign", lhs = ir.index(ir.var(g), ir.bin("+", ir.copy(slot), ir.member("blockIdx", "y"))),
        op = "=", rhs = ir.var(n) }
    end
  end
  file[#file + 1] = { s = "expr", e = ir.call("__threadfence", {}) }
  file[#file + 1] = assign(LAST, "=", ir.bin("==", ir.call("atomicAdd", { { k = "un", op = "&",
    a = ir.index(ir.var(DONE_G), ir.member("blockIdx", "x")) }, { k = "cast", type = "unsigned int", a = ir.num(1) } }), ir.num(count - 1)))
  local function filed_at(n, c)
    local g = { k = "cast", type = "volatile " .. types[n]:gsub("^const%s+", "") .. " *", a = ir.var(filed[n]) }
    return ir.index(g, ir.bin("+", ir.copy(slot), c))
  end
  local merge_all = { { s = "expr", e = ir.call("__threadfence", {}) } }
  for _, acc in ipairs(accs) do
    for _, n in ipairs(names_of(acc)) do merge_all[#merge_all + 1] = assign(n, "=", filed_at(n, ir.num(0))) end
    merge_all[#merge_all + 1] = { s = "for", init = { s = "let", type = "int", name = CHUNK, init = ir.num(1) },
      cond = ir.bin("<", ir.var(CHUNK), ir.num(count)), step = { s = "assign", lhs = ir.var(CHUNK), op = "++" },
      body = merge(acc, types, function(n) return filed_at(n, ir.var(CHUNK)) end) }
  end
  merge_all[#merge_all + 1] = { s = "if", cond = ir.bin("==", ir.member("threadIdx", "x"), ir.num(0)), then_ = {
    { s = "assign", lhs = ir.index(ir.var(DONE_G), ir.member("blockIdx", "x")), op = "=", rhs = ir.num(0) } } }
  local stmts = {
    { s = "if", cond = ir.bin("==", ir.member("threadIdx", "x"), ir.num(0)), then_ = file },
    { s = "expr", e = ir.call("__syncthreads", {}) },
    { s = "if", cond = { k = "un", op = "!", a = ir.var(LAST) }, then_ = { { s = "return" } } },
  }
  for _, st in ipairs(merge_all) do stmts[#stmts + 1] = st end
  return { { s = "if", cond = { k = "un", op = "!", a = ir.var(ALONE) }, then_ = stmts } }, globals
end

-- split_reduce(y=R): the outputs stay on threadIdx.x, their accesses as
-- coalesced as they were, and R threads along threadIdx.y take strided
-- shares of each output's reduction; the partials meet in shared memory in
-- lane order. For an output axis too short to fill the device, as the
-- columns of a column reduction. Every thread reaches the one barrier: a
-- thread past the guard skips the loop, waits, and returns right after it.
local LY = "ly_"

local function apply_y(k, p)
  local r = p.y
  if math.type(r) ~= "integer" or r < 2 or r > 32 then return nil, "split_reduce(y=R) with 2 to 32 threads along y" end
  local out = ir.clone(k)
  local x = ir.axis_on(out, "x")
  if not x or not x.block then return nil, "no output axis on threadIdx.x" end
  if not x.extent_ann then return nil, "the guard gives no bound for " .. x.name end
  if x.expr then return nil, x.name .. " is not blockIdx * B + threadIdx" end
  for _, o in ipairs(out.axes) do
    if o ~= x and o.block then return nil, o.name .. " has threads along " .. o.dim .. ": y takes the split, so only the axis on x may" end
  end
  local bx = geometry.value(out, x.threads_ann)
  if not bx then return nil, "the block along x (" .. x.threads_ann .. ") is not a constant of the kernel" end
  if bx * r > 1024 then return nil, string.format("%d x %d threads a block: CUDA allows 1024", bx, r) end
  local a, why = lanes_apart(out, { LY, LIVE, "w_" })
  if not a then return nil, why end
  local at, loop
  for i, s in ipairs(out.body) do
    if s.s == "for" then
      if loop then return nil, "more than one top-level loop: y splits one reduction" end
      at, loop = i, a.loops[s]
    end
  end
  if not loop or loop.kind ~= "reduce" then return nil, "no reduction loop to split (no loop combines an accumulator by +, max, min, argmax or argmin)" end
  local types = {}
  for i = 1, at - 1 do
    local s = out.body[i]
    if s.s ~= "let" then return nil, "code before the loop other than declarations: every thread must reach the barrier after it" end
    types[s.name] = s.type
  end
  for i = at + 1, #out.body do
    local bad
    ir.walk({ out.body[i] }, function(t)
      if t.s == "for" or t.s == "raw" then bad = "a loop after the reduction would run once per lane" end
      if t.s == "expr" and t.e.k == "call" and t.e.fn:match("^atomic") then bad = "an atomic after the reduction would run once per lane" end
    end)
    if bad then return nil, bad end
  end
  local accs = travelling(loop.accs)
  local body, pre, ops = {}, { { s = "let", type = "const int", name = LY, init = ir.member("threadIdx", "y") } }, {}
  body[1] = { s = "let", type = "const bool", name = LIVE, init = ir.live(out.guard) }
  -- a thread past the guard stays until the barrier, reading nothing
  for i = 1, at - 1 do body[#body + 1] = live_only(out.body[i]) end
  local lane_loop = lane_share(loop.stmt, loop.var, LY, r)
  for _, acc in ipairs(accs) do
    for _, n in ipairs(names_of(acc)) do
      if not types[n] then return nil, "the accumulator " .. n .. " is not declared before the loop" end
    end
    -- a sum starts from its initial value once, in lane 0
    if acc.op == "+" then
      body[#body + 1] = { s = "if", cond = ir.bin("!=", ir.var(LY), ir.num(0)), then_ = { assign(acc.name, "=", ir.num(0)) } }
    end
    ops[#ops + 1] = acc.name .. " by " .. acc.op
  end
  body[#body + 1] = { s = "if", cond = ir.var(LIVE), then_ = { lane_loop } }
  local shared, n_shared = {}, 0
  for _, acc in ipairs(accs) do
    for _, n in ipairs(names_of(acc)) do
      n_shared = n_shared + 1
      shared[n] = "part_" .. n .. "_" .. n_shared
      pre[#pre + 1] = { s = "raw", text = "__shared__ " .. types[n] .. " " .. shared[n] .. "[" .. r .. "][" .. x.threads_ann .. "];", writes = {} }
      body[#body + 1] = { s = "assign", lhs = ir.index(ir.index(ir.var(shared[n]), ir.var(LY)), ir.member("threadIdx", "x")), op = "=", rhs = ir.var(n) }
    end
  end
  body[#body + 1] = { s = "expr", e = ir.call("__syncthreads", {}) }
  -- past the one barrier a thread past the guard leaves: its merge could
  -- read memory at its own out-of-range coordinates (an argmax's key)
  body[#body + 1] = { s = "if", cond = { k = "un", op = "!", a = ir.var(LIVE) }, then_ = { { s = "return" } } }
  local function part(n, lane) return ir.index(ir.index(ir.var(shared[n]), lane), ir.member("threadIdx", "x")) end
  -- every lane merges the same partials in the same order: the same value
  for _, acc in ipairs(accs) do
    for _, n in ipairs(names_of(acc)) do body[#body + 1] = assign(n, "=", part(n, ir.num(0))) end
    body[#body + 1] = { s = "for", init = { s = "let", type = "int", name = "w_", init = ir.num(1) },
      cond = ir.bin("<", ir.var("w_"), ir.num(r)), step = { s = "assign", lhs = ir.var("w_"), op = "++" },
      body = merge(acc, types, function(n) return part(n, ir.var("w_")) end) }
  end
  for i = at + 1, #out.body do body[#body + 1] = out.body[i] end
  out.body, out.guard = body, nil
  out.pre = out.pre or {}
  for _, st in ipairs(pre) do out.pre[#out.pre + 1] = st end
  out.schedule.split = "y"
  local ok, why = geometry.relaunch(out)
  if not ok then return nil, why end
  -- threadIdx.y has no axis: the launch gets its R threads here
  local g, b = out.launch.grid, out.launch.block
  g[2], b[1], b[2] = g[2] or "1", b[1] or "1", tostring(r)
  out.applied[#out.applied + 1] = "split_reduce"
  local ties, rounding = order_words(a, types)
  return out, string.format("legal: the outputs stay on threadIdx.x; %d threads along threadIdx.y take strided shares of the loop over %s, which reduces %s; the partials meet in shared memory in lane order, so every lane ends with the same value and stores it%s; every thread reaches the barrier (past the guard it reads nothing, skips the loop and returns right after the barrier); %s",
    r, loop.var, table.concat(ops, ", "), ties, rounding)
end

function M.apply(k, p)
  if k.schedule.points then return nil, "coarsen goes last: apply split_reduce first" end
  if k.schedule.split then return nil, "already split" end
  if k.schedule.vector then return nil, "vectorize already gave each thread consecutive points: split_reduce does not compose with it" end
  if k.schedule.staged then return nil, "stage placed barriers and shared tiles: split_reduce does not compose with it" end
  if p.y then return apply_y(k, p) end
  local mode = p[1] == "warp" and "warp" or (p.block and "block") or (p[1] == "block" and "block") or nil
  if not mode then return nil, "split_reduce(warp [, wpb=W]), split_reduce(block=B) or split_reduce(y=R)" end
  local nt = mode == "warp" and 32 or (type(p.block) == "table" and p.block[1] or p.block or 256)
  if mode == "block" and (type(nt) ~= "number" or nt % 32 ~= 0 or nt < 64 or nt > 1024) then return nil, "a block split needs 64 to 1024 threads, whole warps" end
  local wpb = mode == "warp" and (p.wpb or 8) or 1
  if type(wpb) ~= "number" or wpb < 1 or wpb > 32 then return nil, "wpb is 1 to 32 warps a block" end
  local width = mode == "warp" and (p.lanes or 32) or nt
  if mode == "warp" and not GROUP[width] then return nil, "lanes is 2, 4, 8, 16 or 32 lanes an output" end
  if mode ~= "warp" and p.lanes then return nil, "lanes=L groups the lanes of a warp: split_reduce(warp, lanes=L)" end
  local count = p.blocks
  if count ~= nil then
    if mode ~= "block" then return nil, "blocks=K gives an output K blocks: split_reduce(block=B, blocks=K)" end
    if math.type(count) ~= "integer" or count < 2 or count > 1024 then return nil, "blocks is 2 to 1024 blocks an output" end
  end
  -- several outputs a warp: a lane past the bounds may not leave before the
  -- shuffles its group's neighbours wait on
  local grouped = width < 32
  local out = ir.clone(k)
  local x = ir.axis_on(out, "x")
  if not x or not x.block then return nil, "no output axis on threadIdx.x" end
  if not x.extent_ann then return nil, "the guard gives no bound for " .. x.name end
  local a, why = lanes_apart(out, count and { LANE, OFF, WARP, LIVE, "w_", SHARE, STRIDE, ALONE, LAST, CHUNK }
    or { LANE, OFF, WARP, LIVE, "w_" })
  if not a then return nil, why end
  if count then
    local text = (out.prefix or "") .. (out.suffix or "")
    if text:find(PART_G, 1, true) or text:find(DONE_G, 1, true) then return nil, "the file already names kl_split_*" end
    if #a.loops.list ~= 1 then return nil, "blocks=K splits the kernel's one loop, a reduction, and it has " .. #a.loops.list end
  end
  local globals = {}
  -- a share of the loop starts at lane_ (share_ across K blocks) and steps by the threads on it
  local share, step = LANE, width
  if count then share, step = SHARE, STRIDE end
  local types, reduces, maps, reasons = {}, 0, 0, {}
  local body = {}
  local shared_decls = {}
  local warps = nt // 32
  local last_reduce = 0
  if grouped then
    if not out.guard then return nil, "no bounds guard: lanes=L needs to know which lanes are past the bounds" end
    for i, s in ipairs(out.body) do
      if s.s == "for" and a.loops[s] and a.loops[s].kind == "reduce" then last_reduce = i end
    end
    body[1] = { s = "let", type = "const bool", name = LIVE, init = ir.live(out.guard) }
  end
  for i, stmt in ipairs(out.body) do
    local s = stmt
    -- before the last merge a lane past the bounds stays, reading nothing
    local dead_stays = grouped and i <= last_reduce
    if s.s == "let" then
      types[s.name] = s.type
      if dead_stays then s = live_only(s) end
    end
    if s.s == "for" then
      local loop = a.loops[s]
      if loop.kind == "seq" then return nil, "the loop over " .. loop.var .. " is sequential (" .. loop.why .. "): it cannot be split" end
      local lane_loop = lane_share(s, loop.var, share, step)
      if dead_stays then lane_loop = { s = "if", cond = ir.var(LIVE), then_ = { lane_loop } } end
      if loop.kind == "reduce" then
        reduces = reduces + 1
        local ops = {}
        for _, acc in ipairs(travelling(loop.accs)) do
          if acc.op == "+" then
            body[#body + 1] = { s = "if", cond = ir.bin("!=", ir.var(share), ir.num(0)), then_ = { assign(acc.name, "=", ir.num(0)) } }
          end
          ops[#ops + 1] = acc.name .. " by " .. acc.op
        end
        body[#body + 1] = lane_loop
        for _, acc in ipairs(travelling(loop.accs)) do
          for _, n in ipairs(names_of(acc)) do
            if not types[n] then return nil, "the accumulator " .. n .. " is not declared before the loop" end
          end
          body[#body + 1] = warp_combine(acc, types, math.min(width, 32), grouped and LIVE or nil)
          if mode == "block" then
            local shared = {}
            for _, n in ipairs(names_of(acc)) do
              shared[n] = "part_" .. n .. "_" .. reduces
              shared_decls[#shared_decls + 1] = { s = "raw", text = "__shared__ " .. types[n] .. " " .. shared[n] .. "[" .. warps .. "];", writes = {} }
            end
            for _, st in ipairs(block_combine(acc, types, warps, shared)) do body[#body + 1] = st end
          end
        end
        if count then
          local stmts, g = across_blocks(travelling(loop.accs), types, count, reduces)
          for _, st in ipairs(stmts) do body[#body + 1] = st end
          for _, t in ipairs(g) do globals[#globals + 1] = t end
        end
        reasons[#reasons + 1] = "the loop over " .. loop.var .. " reduces " .. table.concat(ops, ", ")
        if grouped and i == last_reduce then
          -- every shuffle is done: a lane past the bounds leaves
          body[#body + 1] = { s = "if", cond = { k = "un", op = "!", a = ir.var(LIVE) }, then_ = { { s = "return" } } }
        end
      else
        maps = maps + 1
        body[#body + 1] = lane_loop
        reasons[#reasons + 1] = "the loop over " .. loop.var .. " stores apart at each iteration"
      end
    else
      local atomic
      ir.walk({ s }, function(t)
        if t.s == "expr" and t.e.k == "call" and t.e.fn:match("^atomic") then atomic = true end
        if t.s == "raw" then atomic = atomic or "raw" end
        if t.s == "for" then atomic = atomic or "loop" end
      end)
      if atomic == true then return nil, "an atomic outside the split loops would run once per lane" end
      if atomic == "raw" then return nil, "an opaque loop outside the split loops would run once per lane" end
      if atomic == "loop" then return nil, "a loop nested in a branch: only top-level loops are split" end
      if dead_stays and s.s ~= "let" then s = { s = "if", cond = ir.var(LIVE), then_ = { s } } end
      body[#body + 1] = s
    end
  end
  if reduces == 0 then return nil, "no reduction loop to split (no loop combines an accumulator by +, max, min, argmax or argmin)" end
  out.body = body
  local bid = ir.member("blockIdx", "x")
  if x.cast then bid = { k = "cast", type = x.cast, a = bid } end
  if mode == "warp" then
    local per_block = wpb * (32 // width)
    x.expr = ir.bin("+", ir.bin("*", bid, ir.num(per_block)), ir.bin("/", ir.member("threadIdx", "x"), ir.num(width)))
    x.threads_ann, x.per_block_ann = tostring(32 * wpb), tostring(per_block)
    out.pre = { { s = "let", type = "const int", name = LANE, init = ir.bin("%", ir.member("threadIdx", "x"), ir.num(width)) } }
    if grouped then out.guard = nil end
  else
    x.expr = bid
    x.threads_ann, x.per_block_ann = tostring(nt), "1"
    out.pre = { { s = "let", type = "const int", name = LANE, init = ir.member("threadIdx", "x") },
      { s = "let", type = "const int", name = WARP, init = ir.bin("/", ir.member("threadIdx", "x"), ir.num(32)) } }
    for _, d in ipairs(shared_decls) do out.pre[#out.pre + 1] = d end
    if count then
      -- outputs past the slots: block 0 of the K takes the whole loop
      local slots = M.SLOTS // count
      local pre = out.pre
      pre[#pre + 1] = { s = "raw", text = "__shared__ bool " .. LAST .. ";", writes = {} }
      pre[#pre + 1] = { s = "let", type = "const bool", name = ALONE, init = ir.bin(">=", ir.member("blockIdx", "x"), { k = "cast", type = "unsigned int", a = ir.num(slots) }) }
      pre[#pre + 1] = { s = "if", cond = ir.bin("&&", ir.var(ALONE), ir.bin("!=", ir.member("blockIdx", "y"), ir.num(0))),
        then_ = { { s = "return" } } }
      pre[#pre + 1] = { s = "let", type = "const int", name = SHARE, init = { k = "tern", c = ir.var(ALONE), a = ir.var(LANE),
        b = ir.bin("+", ir.bin("*", { k = "cast", type = "int", a = ir.member("blockIdx", "y") }, ir.num(nt)), ir.var(LANE)) } }
      pre[#pre + 1] = { s = "let", type = "const int", name = STRIDE, init = { k = "tern", c = ir.var(ALONE), a = ir.num(nt),
        b = ir.num(nt * count) } }
      out.globals = { table.unpack(out.globals or {}) }
      for _, t in ipairs(globals) do out.globals[#out.globals + 1] = t end
      out.globals[#out.globals + 1] = "__device__ unsigned int " .. DONE_G .. "[" .. slots .. "];"
    end
  end
  -- the other axes: one point per block, so a warp (a block) is one output
  for _, o in ipairs(out.axes) do
    if o ~= x and o.block then
      o.block, o.threads_ann, o.per_block_ann, o.expr = ir.num(1), "1", "1", nil
    end
  end
  out.schedule.split = mode
  local ok, why = geometry.relaunch(out)
  if not ok then return nil, why end
  if count then
    local g = out.launch.grid
    if (g[2] and g[2] ~= "1") or (g[3] and g[3] ~= "1") then
      return nil, "blocks=K takes blockIdx.y, and the grid already spans y or z"
    end
    g[2] = tostring(count)
    out.schedule.blocks = count
  end
  out.applied[#out.applied + 1] = "split_reduce"
  local ties, rounding = order_words(a, types)
  local who = mode == "block" and ("of " .. nt .. " threads" .. (count and string.format(
    " (%d blocks an output along blockIdx.y: each block's partial goes to a slot, and the last of the %d to count itself in after a fence merges the slots in block order and resets the count; past %d outputs one block takes an output alone)",
    count, count, M.SLOTS // count) or "")) or
    (grouped and string.format("lane of a group of %d (%d outputs a warp)", width, 32 // width) or "lane of a warp")
  local dead = grouped and "a lane past the bounds reads nothing, joins its group's shuffles and leaves after the last; " or ""
  return out, string.format("legal: %s; each %s takes a strided share and the partials meet by a shuffle butterfly%s%s%s; %s%s",
    table.concat(reasons, "; "), who, grouped and " inside the group" or "",
    mode == "block" and " then shared memory in warp order" or "", ties, dead, rounding)
end

function M.candidates(k)
  return { { "warp" }, { "warp", wpb = 4 }, { "warp", lanes = 4 }, { "warp", lanes = 8 }, { block = 256 }, { y = 4 }, { y = 8 },
    { block = 256, blocks = 16 } }
end

return M
