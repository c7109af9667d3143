-- A static model of a schedule's gain: the sequence's primitives read one
-- by one, each a factor computed from kir.analyze of the unscheduled kernel
-- and the workload's bench sizes. What it weighs:
--   - how a warp touches global memory (thread-x stride 0 or 1 coalesced,
--     anything else a sector a thread): map and split_reduce change which
--     dimension the lanes walk;
--   - parallelism against the device's threads (SMs x 2048): coarsen and
--     vectorize divide the threads, split_reduce multiplies them, and a
--     kernel with fewer outputs than threads gains from more (as a square
--     root: a latency-bound loop overlaps some of its loads anyway);
--   - lanes a short reduction leaves idle (split_reduce over L < 2p), and
--     the merge's shuffles where a split gains nothing else;
--   - a loop whose range a load decides (a CSR row, `k` from row_ptr[r]):
--     lanes on r read it at unrelated places, whatever k's stride;
--   - reuse a stage or register tile captures (loads independent of an
--     output axis; a load a warp broadcasts gains the square root), and
--     the strided loads stage's tile exchange makes coalesced;
--   - global atomics privatize moves to shared memory, and the quadratic
--     loop a scan replaces.
-- The constants were set from the development suite's tune part measured
-- on the H200 (bench/schedules.lua); the test part never informed them.
-- It ranks rows; it never keeps a kernel alone where the backend times
-- kernels (the gate does).
--   schedule_rank.predict(before, after, text, reasons [, opts]) -> { speedup, why }
--       opts = { workload (sizes: params and args), sm_count }
--   schedule_rank.rank(rows) -> rows, best predicted first (prior x speedup)
--   schedule_rank.prior(row) -> the factor of row.prior (the schedule skills'
--       evidence, search/schedules.lua), 1 without one
--   schedule_rank.CONFIDENCE: how a prediction weighs beside skills' evidence
local kir = require "klineage.kir"
local ir = require "klineage.kir.ir"
local annotations = require "klineage.workload.annotations"
local sizes = require "klineage.kir.sizes"

local M = {}

-- Beside skills (skill_rows.rank), a prediction weighs as a skill of this
-- confidence: the model counts accesses and threads, not latency or
-- occupancy, and errs by tens of percent.
M.CONFIDENCE = "low"

M.STRIDED_COST = 4      -- a strided warp load moves about 4x the bytes it uses
M.DEFAULT_TILE = 4      -- the reuse a stage or register_tile gives when its reasons name no size
M.SM_COUNT = 132        -- sm_90's reference device (H100 SXM, H200) when none is given
M.THREADS_PER_SM = 2048
M.DEFAULT_REDUCE = 16   -- a reduction whose length the sizes do not give (CSR rows)
M.COARSEN_ILP = 0.06    -- per extra output a thread computes: more loads in flight
M.VECTOR_GAIN = 0.12    -- per lane of a float2/float4 access: fewer, wider instructions
M.SCAN_GAIN = 8         -- a quadratic prefix loop replaced by a block scan
M.ACROSS_BLOCKS = 0.8   -- split_reduce(blocks=K) where one block an output already fills the device (a guess, not measured)
M.MAX = 64

local function analyzed(kernel)
  local ok, a = pcall(kir.analyze, kernel)
  if ok and type(a) == "table" then return a end
end

local value = sizes.value

local function coalesced(stride) return stride == nil or stride == "0" or stride == "1" end

-- The loop variables whose range a load decides, by the names that load's
-- index reads (a CSR row's `for (k = row_ptr[r]; k < row_ptr[r + 1]; ...)`
-- gives k = { r = true }): along r, lanes at the same trip read unrelated
-- places, whatever k's own stride.
local function data_ranges(a)
  if a.data_ranges then return a.data_ranges end
  local out = {}
  for _, l in ipairs(a.loops and a.loops.list or {}) do
    for _, b in ipairs({ l.lo, l.hi }) do
      ir.visit(b, function(e)
        if e.k == "index" then
          for name in pairs(ir.vars(e)) do
            out[l.var] = out[l.var] or {}
            out[l.var][name] = true
          end
        end
      end)
    end
  end
  a.data_ranges = out
  return out
end

-- An access's stride along dimension d (an axis, one of its digits, or a loop variable).
local function stride_along(acc, d, digits, ranges)
  if not acc.coefs then return "?" end
  for v, c in pairs(acc.coefs) do
    if c ~= "0" and ranges and ranges[v] and ranges[v][d] then return "?" end
  end
  local s = acc.coefs[d]
  for dn, dg in pairs(digits or {}) do
    if dg.of == d and dg.inner and acc.coefs[dn] then s = acc.coefs[dn] end
  end
  return s or "0"
end

-- The weighted global accesses when the lanes walk dimension d; with a
-- tile, loads reused across an output axis (broadcasts aside) are divided
-- by it, and a load that repeats an earlier one's strides at another
-- offset (a stencil's neighbour) costs HALO: the cache served part of it.
M.HALO = 0.25

-- An access's array and strides, offsets aside: a stencil's neighbours share it.
local function shape_of(acc)
  if not acc.coefs then return nil end
  local t = {}
  for k, v in pairs(acc.coefs) do if k ~= "" then t[#t + 1] = k .. "=" .. v end end
  table.sort(t)
  return acc.array .. "|" .. table.concat(t, ",")
end

local function cost_along(m, d, tile, windows)
  local a, cost, shapes = m.a, 0, {}
  for _, acc in ipairs(a.accesses or {}) do
    if acc.array ~= "?" and (acc.kind == "load" or acc.kind == "store") then
      local s = d and stride_along(acc, d, a.digits, data_ranges(a)) or acc.stride_x
      local c = coalesced(s) and 1 or M.STRIDED_COST
      if tile and acc.kind == "load" then
        local shape = shape_of(acc)
        if windows and windows[acc.array] then
          -- a sliding window's neighbours already hit L1 when read apart:
          -- staging saves instructions and L1 traffic, counted as the
          -- square root of its reads an element
          c = c / math.sqrt(math.min(tile, m.reduce_len or tile))
        elseif acc.reuse and #acc.reuse > 0 then
          -- a warp's broadcast already shares its load across the lanes and
          -- the other warps' copies hit L1: a tile saves it nothing (nbody's
          -- staged bodies measured 0.41x to 0.54x of its split on the H100,
          -- attention's stage 3.98x, which the strided operand alone explains)
          c = s == "0" and c or c / tile
        elseif shape and shapes[shape] then
          c = c * M.HALO
        end
        if shape then shapes[shape] = true end
      end
      cost = cost + c * m.weights[acc]
    end
  end
  return math.max(cost, 0.25)
end

-- An access inside loops counts once a trip, up to LOOP_CAP: a load in a
-- reduction of 64 weighs more than the store after it.
M.LOOP_CAP = 16
-- A loop's trip count at the bench size, DEFAULT_REDUCE where unknown.
local function length(l, env)
  local n = sizes.trips(l, env)
  return n and n > 0 and n or M.DEFAULT_REDUCE
end

local function weights(a, env)
  local len = {}
  for _, l in ipairs(a.loops and a.loops.list or {}) do len[l.var] = length(l, env) end
  local w = {}
  for _, acc in ipairs(a.accesses or {}) do
    local n = 1
    for _, v in ipairs(acc.loops or {}) do n = n * (len[v] or M.DEFAULT_REDUCE) end
    w[acc] = math.min(n, M.LOOP_CAP)
  end
  return w
end

-- The primitives of a sequence's text: { name, args = { positional..., key = value } }.
local function steps_of(text)
  local steps = {}
  for name, body in text:gmatch("([%w_]+)(%b())") do
    local args = {}
    for item in body:sub(2, -2):gmatch("[^,]+") do
      local k, v = item:match("^%s*([%w_]+)%s*=%s*(.-)%s*$")
      if k then args[k] = v else args[#args + 1] = item:match("^%s*(.-)%s*$") end
    end
    steps[#steps + 1] = { name = name, args = args }
  end
  return steps
end

local function tile_of(reasons)
  for _, r in ipairs(reasons or {}) do
    local t = tonumber(tostring(r):match("tiles? of (%d+)"))
    if t then return t end
  end
  return M.DEFAULT_TILE
end

-- The share of the device's threads n threads fill.
local function fill(n, threads) return math.min(1, n / threads) end

-- The outermost reduction loop: its variable and length.
local function reduction(a, env)
  for _, l in ipairs(a.loops and a.loops.list or {}) do
    if l.kind == "reduce" then return l.var, length(l, env) end
  end
end

local FACTOR = {}

function FACTOR.map(m, step)
  local x = step.args.x
  if not x or x == m.x then return 0.99, "the same lanes, another block shape" end
  local f = cost_along(m, m.x) / cost_along(m, x)
  m.x = x
  return f, string.format("lanes along %s: global accesses weigh %.2fx less", x, f)
end

function FACTOR.coarsen(m, step)
  local n = tonumber(step.args.factor) or 2
  local before = fill(m.threads, m.device)
  m.threads = m.threads / n
  local f = fill(m.threads, m.device) / before * (1 + M.COARSEN_ILP * n)
  return f, string.format("%d outputs a thread: %.0f threads for %.0f the device runs at once", n, m.threads, m.device)
end

function FACTOR.vectorize(m, step)
  local n = tonumber(step.args[1]) or 4
  local before = fill(m.threads, m.device)
  m.threads = m.threads / n
  return fill(m.threads, m.device) / before * (1 + M.VECTOR_GAIN * n), string.format("%d-wide accesses", n)
end

function FACTOR.persist(_, step)
  return 1, string.format("at most %s blocks along %s take the same blocks in turn: the same work", tostring(step.args.blocks), tostring(step.args.dim))
end

function FACTOR.split_reduce(m, step)
  if not m.reduce_var then return 1, "no reduction found" end
  local y = tonumber(step.args.y)
  if y then
    -- the outputs keep their lanes: parallelism changes, and each lane's
    -- L / y trips gain the y-step merge (L / (L + y^2) of the work stays useful)
    local par = math.sqrt(fill(m.threads * y, m.device) / fill(m.threads, m.device))
    local useful = m.reduce_len / (m.reduce_len + y * y)
    m.threads = m.threads * y
    return par * useful, string.format("%d lanes along y an output over a reduction of %d, the outputs' accesses as they were: parallelism %.1fx, merge overhead %.2fx",
      y, m.reduce_len, par, useful)
  end
  local p = step.args[1] == "warp" and (tonumber(step.args.lanes) or 32) or tonumber(step.args.block) or 256
  local blocks = tonumber(step.args.blocks)
  -- blocks=K: K blocks an output, their partials through global slots; the
  -- round trip and the last block's merge only pay where one block an
  -- output leaves the device unfilled
  local across = 1
  if blocks then
    if fill(m.threads * p, m.device) >= 1 then across = M.ACROSS_BLOCKS end
    p = p * blocks
  end
  local par = math.sqrt(fill(m.threads * p, m.device) / fill(m.threads, m.device))
  local idle = math.min(1, m.reduce_len / (2 * p))
  local coal = cost_along(m, m.x) / cost_along(m, m.reduce_var)
  -- the merge: log2 shuffle steps inside a warp, then one a warp of a block,
  -- beside each lane's len / p trips; it counts where nothing is gained
  -- besides (the device already full, the accesses as coalesced as before)
  local merge = 1
  if par <= 1 and coal <= 1 then
    local trips, steps = m.reduce_len / p, math.log(math.min(p, 32), 2) + math.max(0, p // 32 - 1)
    merge = trips / (trips + steps)
  end
  m.threads, m.x = m.threads * p, m.reduce_var
  return par * idle * coal * merge * across, string.format("%d lanes an output over a reduction of %d: parallelism %.1fx, lanes busy %.0f %%, accesses %.2fx, merge %.2fx%s",
    p, m.reduce_len, par, idle * 100, coal, merge, blocks and string.format(", across %d blocks %.2fx", blocks, across) or "")
end

-- stage's tile exchange (a transpose), from its reason: the operands it
-- moves through shared memory, the axis the stores' lanes walk, and the
-- rows of the square a thread takes.
local function exchange_of(reasons)
  for _, r in ipairs(reasons or {}) do
    local arrays, s = tostring(r):match("exchanges (.-) through shared memory.-stored with lanes along ([%w_]+)")
    if arrays then
      local set = {}
      for n in arrays:gmatch("[%w_]+") do set[n] = true end
      return set, s, tonumber(tostring(r):match("block takes (%d+) row")) or 1
    end
  end
end

-- The weighted global accesses with the lanes along d, where the loads of
-- the exchanged operands are coalesced (lanes along their own axis).
local function cost_exchanged(m, d, arrays)
  local a, cost = m.a, 0
  for _, acc in ipairs(a.accesses or {}) do
    if acc.array ~= "?" and (acc.kind == "load" or acc.kind == "store") then
      local direct = acc.kind == "load" and arrays[acc.array]
      cost = cost + ((direct or coalesced(stride_along(acc, d, a.digits, data_ranges(a)))) and 1 or M.STRIDED_COST) * m.weights[acc]
    end
  end
  return math.max(cost, 0.25)
end

function FACTOR.stage(m, _, reasons)
  local arrays, s, rows = exchange_of(reasons)
  if arrays then
    local f = cost_along(m, m.x) / cost_exchanged(m, s, arrays)
    local before = fill(m.threads, m.device)
    m.threads, m.x = m.threads / rows, s
    f = f * fill(m.threads, m.device) / before
    return f, string.format("a tile exchange: stores along %s and the exchanged loads both coalesced, %d rows a thread: %.2fx", s, rows, f)
  end
  local tile, windows = tile_of(reasons), {}
  for _, r in ipairs(reasons or {}) do
    for array in tostring(r):gmatch("a window of ([%w_]+) sliding") do windows[array] = true end
  end
  local f = cost_along(m, m.x) / cost_along(m, m.x, tile, windows)
  return f, string.format("reused loads shared by a tile of %d: accesses %.2fx", tile, f)
end
FACTOR.stage_halo = FACTOR.stage

function FACTOR.register_tile(m, step)
  local r, c = tonumber(step.args[1]) or 2, tonumber(step.args[2]) or 2
  local tile = 2 * r * c / (r + c) -- loads per output fall from 2 to (r + c) / (r c)
  local before = fill(m.threads, m.device)
  m.threads = m.threads / (r * c)
  local f = cost_along(m, m.x) / cost_along(m, m.x, tile) * fill(m.threads, m.device) / before
  return f, string.format("a %dx%d register tile: reused loads shared by %.1f", r, c, tile)
end

function FACTOR.privatize(_, step)
  local items = tonumber(step.args.items) or 1
  return 2 + 4 * items, "global atomics moved to shared memory"
end

function FACTOR.scan() return M.SCAN_GAIN, "a quadratic prefix loop replaced by a block scan" end
function FACTOR.segscan() return M.SCAN_GAIN, "a walk back over each segment replaced by a segmented block scan" end
function FACTOR.unroll() return 1, "unrolled: no change the model sees" end
function FACTOR.unflatten() return 1.02, "a multi-dimensional grid: fewer index divisions" end

-- The naive kernel's launch at the workload's bench size ({ grid, block }),
-- or nil where its annotations do not resolve.
local function launched(kernel, w)
  if type(w) ~= "table" or type(w.params) ~= "table" or type(kernel.prefix) ~= "string" then return nil end
  local ok, res = pcall(annotations.resolve, kernel.prefix, w.params, { kernel = kernel.launch and kernel.launch.named or nil })
  return ok and type(res) == "table" and res.geometry or nil
end

-- An axis the guard does not bound (a head or batch index straight from
-- blockIdx.z) spans the launch along its dimension.
local DIM = { x = 1, y = 2, z = 3 }
local function unguarded_extent(axis, geom)
  local d = DIM[axis.dim]
  if not (geom and d) then return nil end
  local blocks = geom.grid[d]
  if not blocks then return nil end
  if not axis.block then return blocks end
  local threads = geom.block[d]
  return threads and blocks * threads or nil
end

-- before, after: kir kernels; text: the sequence; reasons: its legality reasons.
function M.predict(before, _after, text, reasons, opts)
  opts = opts or {}
  -- a sequence that unflattens first is read on the unflattened kernel:
  -- the digits become axes, so the reuse along them and their strides
  -- are what the later primitives work on (a flat index hides both)
  local first = text:match("^%s*(unflatten%b())")
  if first then
    local ok, k = pcall(kir.apply, before, first)
    if ok and k then before = k end
  end
  local a = analyzed(before)
  if not a then return { speedup = 1, why = "no prediction: the analysis failed" } end
  local env = sizes.of(before, opts.workload)
  local outputs, geom = 1, nil
  for _, axis in ipairs(before.axes or {}) do
    local n = value(axis.extent or axis.count, env)
    if not n then
      geom = geom or launched(before, opts.workload)
      n = unguarded_extent(axis, geom)
    end
    outputs = outputs * (n or 1)
  end
  local reduce_var, reduce_len = reduction(a, env)
  local m = { a = a, weights = weights(a, env), x = a.thread_x, threads = math.max(outputs, 1), reduce_var = reduce_var, reduce_len = reduce_len,
              device = (opts.sm_count or M.SM_COUNT) * M.THREADS_PER_SM }
  local s, whys = 1, {}
  for _, step in ipairs(steps_of(text)) do
    local factor = FACTOR[step.name]
    if factor then
      local f, why = factor(m, step, reasons)
      s = s * f
      whys[#whys + 1] = string.format("%s %.2fx (%s)", step.name, f, why)
    end
  end
  s = math.min(M.MAX, s)
  return { speedup = s, why = string.format("%.0f outputs; ", outputs) .. table.concat(whys, "; ") }
end

-- The ranked rows with each family's best QUOTA first, in rank order, then
-- the rest in rank order: a family is the order of its primitives, an
-- unroll, a fold or a bound aside. Where the model overrates one family (parameter
-- variants of one idea predicted alike), a search that judges the head of
-- the list still measures the runner-up families before its patience ends.
M.QUOTA = 2
local function family(row)
  local names = {}
  for name in (row.schedule or ""):gmatch("([%w_]+)%b()") do
    if name ~= "unroll" and name ~= "persist" and name ~= "bound" then names[#names + 1] = name end
  end
  return table.concat(names, " ")
end
function M.spread(rows, quota)
  quota = quota or M.QUOTA
  local head, tail, seen = {}, {}, {}
  for _, r in ipairs(rows) do
    local f = family(r)
    seen[f] = (seen[f] or 0) + 1
    if seen[f] <= quota then head[#head + 1] = r else tail[#tail + 1] = r end
  end
  for _, r in ipairs(tail) do head[#head + 1] = r end
  return head
end

-- The schedule skills' prior of a row (search/schedules.lua sets row.prior).
function M.prior(row) return row.prior and row.prior.factor or 1 end

function M.rank(rows)
  for i, r in ipairs(rows) do r.rank_index = i end
  table.sort(rows, function(x, y)
    local px, py = M.prior(x) * x.predicted.speedup, M.prior(y) * y.predicted.speedup
    if px ~= py then return px > py end
    return x.rank_index < y.rank_index
  end)
  return rows
end

return M
