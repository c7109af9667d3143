-- Schedule rows in the forward search: kir's legal sequences of a lifted
-- kernel, emitted, ranked by the static model with a prediction each; a
-- kernel that does not lift gives none and says why, once.
local files = require "klineage.base.files"
local schedules = require "klineage.search.schedules"
local rank = require "klineage.search.schedule_rank"
local workload = require "klineage.workload"

local home = require("kl.host").home
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local example = home .. "/examples/optimize"
local w = assert(workload.load(example .. "/workload.lua"))
local matmul = assert(files.read_text(example .. "/matmul.cu"))

-- Just what schedules.rows reads of a forward state.
local function fake_state()
  local decided = {}
  return { workload = w, tried = {}, decided = decided,
           decide = function(_, row, _node, fields) decided[#decided + 1] = { row = row, fields = fields } end }
end

describe("schedule rows", function()
  it("come from a liftable kernel, each with its sequence, reasons and a prediction, best predicted first", function()
    local state = fake_state()
    local rows = schedules.rows(state, { source = matmul, sha256 = "m" })
    expect(#rows):at_least(2)
    print(string.format("%d rows; best %s predicted %.2fx: %s", #rows, rows[1].schedule,
      rows[1].predicted.speedup, rows[1].predicted.why))
    for i, r in ipairs(rows) do
      expect(r.skill):contains("schedule:")
      expect(r.by):equals("schedule")
      expect(type(r.source)):equals("string")
      expect(#r.because):at_least(1)
      expect(type(r.predicted.why)):equals("string")
      if r.predicted.speedup > rows[1].predicted.speedup then fail("a row is predicted above the first") end
    end
    -- ranked by prediction, each family's best two first (rank.spread): a
    -- head of at most two rows a family, then the rest, each by prediction
    local count, in_tail, last = {}, false, math.huge
    for i, r in ipairs(rows) do
      local names = {}
      for name in r.schedule:gmatch("([%w_]+)%b()") do
        if name ~= "unroll" and name ~= "persist" and name ~= "bound" then names[#names + 1] = name end
      end
      local f = table.concat(names, " ")
      count[f] = (count[f] or 0) + 1
      if count[f] > 2 and not in_tail then in_tail, last = true, math.huge end
      if in_tail and count[f] <= 2 then fail("row %d (%s) is a family's first two after the head", i, r.schedule) end
      if r.predicted.speedup > last then fail("row %d (%s) is out of the order of prediction", i, r.schedule) end
      last = r.predicted.speedup
    end
    expect(rank.prior(rows[1])):equals(1)
  end)

  it("are none for a kernel that does not lift, and the reason is journaled once", function()
    local state = fake_state()
    local node = { source = "this is not CUDA {", sha256 = "x" }
    expect(#schedules.rows(state, node)):equals(0)
    expect(#schedules.rows(state, node)):equals(0)
    expect(#state.decided):equals(1)
    expect(state.decided[1].fields.status):equals("skipped")
    expect(state.decided[1].fields.why):contains("does not lift")
  end)
end)

-- A suite task's naive kernel and spec, lifted.
local suite = home .. "/examples/suites/held-out"
local function task(name)
  local tw = assert(workload.load(suite .. "/" .. name .. "/workload.lua"))
  return tw, assert(files.read_text(suite .. "/" .. name .. "/kernel.cu"))
end

-- A suite task's schedule rows at other bench sizes (params over its own).
local function rows_at(name, params)
  local tw, src = task(name)
  local state = fake_state()
  state.workload = setmetatable({ params = params }, { __index = tw })
  return schedules.rows(state, { source = src, sha256 = name }, { resources = false })
end

describe("the static model", function()
  -- a task's rows at its own bench size, computed once (the tests only
  -- read them; a large contraction's take seconds)
  local computed = {}
  local function top(name)
    if not computed[name] then
      local tw, src = task(name)
      local state = fake_state()
      state.workload = tw
      computed[name] = schedules.rows(state, { source = src, sha256 = name }, { resources = false })
    end
    return computed[name][1].schedule, computed[name]
  end

  it("weighs parallelism: a few long rows split their reduction, many short ones do not", function()
    expect(top("gemv")):contains("split_reduce")     -- 8192 rows of 8192
    -- 32768 columns of 2048: rows split along y, the columns' lanes kept
    expect(top("colsum")):contains("split_reduce(y=")
    local _, rows = top("conv1d")                    -- 67M outputs, 15 taps
    for _, r in ipairs(rows) do
      -- no split gains; a warp's or a block's leaves most lanes idle
      if r.schedule:find("split_reduce") then expect(r.predicted.speedup < 1):equals(true) end
      if r.schedule:find("split_reduce%(warp%)") or r.schedule:find("split_reduce%(block") then
        expect(r.predicted.speedup < 0.5):equals(true)
      end
    end
  end)

  it("folds a schedule whose grid along y or z cannot launch at the bench size, and skips one no fold helps", function()
    -- spmm_csr: one block a row puts 131072 rows on blockIdx.y; batched_gemm's
    -- unflatten puts 65536 batches on blockIdx.z
    for _, case in ipairs({ { "spmm_csr", "split_reduce(warp,lanes=4) persist(blocks=65535,dim=y)" },
                            { "batched_gemm", "unflatten(block=16x16) persist(blocks=65535,dim=z)" } }) do
      local _, rows = top(case[1])
      local found
      for _, r in ipairs(rows) do
        if r.schedule == case[2] then found = r end
        -- the unfolded form is never offered
        expect(r.schedule == case[2]:gsub(" persist%(.-%)$", "")):equals(false)
      end
      if not found then fail("%s: no row %s", case[1], case[2]) end
      expect(found.source):contains("min(")
    end
  end)

  it("sees a CSR row's loads scattered across rows: a group of lanes a row coalesces them", function()
    -- 524288 rows of 16 nonzeros on average: the range of k is read from
    -- row_ptr[r], so lanes on r read unrelated places; 8 lanes a row read
    -- consecutive ones, and a whole warp would leave most lanes idle
    local best, rows = top("spmv_csr")
    expect(best):contains("split_reduce(warp,lanes=")
    for _, r in ipairs(rows) do
      if r.schedule == "split_reduce(warp)" then expect(r.predicted.speedup < rows[1].predicted.speedup / 2):equals(true) end
    end
  end)

  it("counts the outputs of an axis the guard does not bound from the launch (heads on blockIdx.z)", function()
    -- attention_scores: 16 heads of 1024 x 1024 scores; h = blockIdx.z has
    -- no guard term, its extent is the grid's BH
    local best, rows = top("attention_scores")
    expect(rows[1].predicted.why):contains("16777216 outputs")
    -- the contraction's three moves together, beyond depth 2: lanes on j,
    -- a register tile, the tile of d staged
    expect(best):matches("^map%(.-x=j.-%) register_tile%(8,8%) stage%(")
  end)

  it("offers a three-dimensional block: a 3-D stencil's fastest index moves to threadIdx.x", function()
    -- stencil3d puts z, the slowest index, on threadIdx.x
    expect(top("stencil3d")):matches("^map%(block=32x4x2,x=x,")
  end)

  it("weighs an access once a trip of its loops: a remap that moves a store's stride onto a loop's load gains nothing", function()
    -- attention_scores: j on threadIdx.x coalesces the store of S, and makes
    -- the load of K in the loop over d strided (the H200 measured 0.55x)
    local _, rows = top("attention_scores")
    for _, r in ipairs(rows) do
      if r.schedule == "map(block=32x8,x=j,y=i)" then expect(r.predicted.speedup < 1.1):equals(true) end
    end
  end)

  it("judges each family's best two before a third of any, an unroll or a fold aside", function()
    local function row(schedule, speedup) return { schedule = schedule, predicted = { speedup = speedup } } end
    local spread = rank.spread({ row("map(x=i) stage()", 4), row("map(x=i) stage(buffers=2)", 4),
      row("map(x=i) stage() unroll(4)", 4), row("map(x=j) stage()", 3.9), row("split_reduce(warp)", 2.9),
      row("split_reduce(warp) persist(dim=y)", 2.8) })
    local order = {}
    for i, r in ipairs(spread) do order[i] = r.schedule end
    expect(table.concat(order, " | ")):equals("map(x=i) stage() | map(x=i) stage(buffers=2) | split_reduce(warp) | "
      .. "split_reduce(warp) persist(dim=y) | map(x=i) stage() unroll(4) | map(x=j) stage()")
  end)

  it("sees no gain in staging operands a warp already reads by broadcast; a strided one still gains", function()
    -- nbody's loop reads body j in every lane (H100: staged 0.41x to 0.54x
    -- of the split); attention_scores reads q strided by D (stage 3.98x)
    local _, rows = top("nbody")
    local seen
    for _, r in ipairs(rows) do
      if r.schedule == "map(block=128,x=i) stage()" then seen = true expect(r.predicted.speedup < 1.1):equals(true) end
    end
    expect(seen):equals(true)
    _, rows = top("attention_scores")
    for _, r in ipairs(rows) do
      if r.schedule == "stage()" then expect(r.predicted.speedup > 3):equals(true) end
    end
  end)

  it("sees a sliding window staged: a convolution's signal read once a tile, not once a tap", function()
    -- conv1d (tune part): the model ranked only coarsening before the window form
    local best, rows = top("conv1d")
    expect(best):contains("stage(")
    for _, r in ipairs(rows) do
      if r.schedule:find("stage%(") then
        expect(table.concat(r.kir.reasons, " ")):contains("a window of x sliding along t")
        expect(r.predicted.speedup > 1.3):equals(true)
      end
    end
  end)

  it("caps a prediction at the room the node's measured share of its roofline leaves", function()
    local tw, src = task("attention_scores")
    local state = fake_state()
    -- heads of 256 x 256: the cap does not depend on the size, and rows
    -- without the 8 x 8 tile take a fraction of the time
    state.workload = setmetatable({ params = { BH = 16, L = 256, D = 64 } }, { __index = tw })
    local record = { stages = { profile = { pct_of_roofline = 25 } } }
    local rows = schedules.rows(state, { source = src, sha256 = "a", record = record }, { resources = false })
    for _, r in ipairs(rows) do expect(r.predicted.speedup <= 4):equals(true) end
    expect(rows[1].predicted.speedup):equals(4)
    expect(rows[1].predicted.why):contains("capped at 4.00x")
  end)

  it("extends only the model's best sequence of each order of primitives by one more", function()
    local _, rows = top("attention_scores")
    local deep, orders = 0, {}
    for _, r in ipairs(rows) do
      local names = {}
      for name in r.schedule:gmatch("([%w_]+)%b()") do names[#names + 1] = name end
      if #names == 3 then
        deep = deep + 1
        local prefix = r.schedule:match("^(.-) [%w_]+%b()$")
        orders[prefix] = true
      end
    end
    expect(deep > 0):equals(true)
    local n = 0
    for _ in pairs(orders) do n = n + 1 end
    expect(n <= schedules.DEEPER):equals(true)
  end)

  it("uses the spec's sizes: the same gemv with many rows predicts less for a split", function()
    local split = function(params)
      for _, r in ipairs(rows_at("gemv", params)) do
        if r.schedule == "split_reduce(warp)" then return r.predicted.speedup end
      end
    end
    local few, many = split({ M = 8192, N = 8192 }), split({ M = 8388608, N = 8 })
    expect(few > 4 * many):equals(true)
  end)

  it("shapes unflatten's block and stage's tile to the bench size, and reads what follows unflatten on its digits", function()
    local function first_staged(params)
      local rows = rows_at("batched_gemm", params)
      for i, r in ipairs(rows) do
        if r.schedule:match("^unflatten%b() stage") then return r, i, rows end
      end
    end
    -- 16 x 16 matrices: a block and a tile of 16, one matrix a block; the
    -- model reads the staged operand's reuse along the digit i (a flat t
    -- hides it) and ranks the staging above any coarsening
    local r, at, rows = first_staged({ batch = 4096, M = 16, N = 16, K = 16 })
    expect(r.schedule):contains("unflatten(block=16x16) stage(tile=16)")
    expect(r.predicted.why):contains("reused loads shared by a tile of 16: accesses 1.8")
    for i = 1, at - 1 do
      if rows[i].schedule:find("coarsen", 1, true) then fail("%s ranks above the staging", rows[i].schedule) end
    end
    -- wide matrices and a long reduction: the defaults
    r = first_staged({ batch = 64, M = 64, N = 64, K = 64 })
    expect(r.schedule):contains("unflatten(block=32x8) stage(")
    -- 7 wide and 13 long: a block of 8 x 32, tiles of 16
    r = first_staged({ batch = 64, M = 13, N = 7, K = 13 })
    expect(r.schedule):contains("unflatten(block=8x32) stage(tile=16")
    -- a stranger's sizes (NaN, negative, infinite) shape nothing and break nothing
    for _, bad in ipairs({ { batch = 64, M = 0 / 0, N = 0 / 0, K = 0 / 0 }, { batch = 64, M = -3, N = -7, K = -1 },
                           { batch = 64, M = math.huge, N = math.huge, K = math.huge } }) do
      local ok, why = pcall(first_staged, bad)
      if not ok then fail("sizes %s: %s", require("klineage.workload").params_text(bad), tostring(why)) end
    end
  end)

  it("offers an 8 x 8 register tile where both threaded axes are long at the bench size, not where they are short", function()
    local function offered(params)
      for _, r in ipairs(rows_at("attention_scores", params)) do
        if r.schedule:find("register_tile(8,8)", 1, true) then return r end
      end
    end
    local _, own = top("attention_scores") -- BH = 16, L = 1024, D = 64
    local r
    for _, row in ipairs(own) do
      if not r and row.schedule:find("register_tile(8,8)", 1, true) then r = row end
    end
    expect(r ~= nil):is_true()
    expect(r.predicted.why):contains("a 8x8 register tile: reused loads shared by 8.0")
    expect(offered({ BH = 256, L = 256, D = 64 }) == nil):is_true()
    -- matmul's blocks of 32 x 32: never on a block of 1024 (its some 128
    -- registers a thread cannot launch there), only after a remap to 256
    local state = fake_state()
    local eights = 0
    for _, row in ipairs(schedules.rows(state, { source = matmul, sha256 = "m" }, { resources = false })) do
      if row.schedule:find("register_tile(8,8)", 1, true) then
        eights = eights + 1
        local bx, by = row.source:match("@kl launch [^\n]*block%((%d+), (%d+)%)")
        if not (bx and tonumber(bx) * tonumber(by) <= 256) then
          fail("%s: %s", row.schedule, row.source:match("@kl launch [^\n]*") or "no launch line")
        end
      end
    end
    expect(eights > 0):is_true()
  end)

  it("splits an output over several blocks only where one block an output leaves the device idle", function()
    local dir = here .. "/../fixtures/workloads/few_rows"
    local fw = assert(workload.load(dir .. "/workload.lua"))
    local src = assert(files.read_text(dir .. "/v0.cu"))
    local function rows_at(params)
      local state = fake_state()
      state.workload = setmetatable({ params = params }, { __index = fw })
      local by = {}
      for i, r in ipairs(schedules.rows(state, { source = src, sha256 = "f" }, { resources = false })) do
        by[r.schedule] = by[r.schedule] or { rank = i, speedup = r.predicted.speedup }
      end
      return by
    end
    local few = rows_at({ rows = 16, cols = 4194304 })
    expect(few["split_reduce(block=256,blocks=16)"].rank):equals(1)
    -- 65536 rows: a block a row already fills the device; the slots' round trip costs
    local many = rows_at({ rows = 65536, cols = 4096 })
    expect(many["split_reduce(block=256,blocks=16)"].speedup < many["split_reduce(block=256)"].speedup):equals(true)
  end)

  it("sees a transpose's strided stores made coalesced by stage's tile exchange, not by a remap", function()
    local dir = home .. "/gpu/workloads/transpose"
    local state = fake_state()
    state.workload = assert(workload.load(dir .. "/workload.lua"))
    local rows = schedules.rows(state, { source = assert(files.read_text(dir .. "/v0_naive.cu")), sha256 = "t" }, { resources = false })
    expect(rows[1].schedule):matches("^stage%(")
    -- in coalesced, out strided (weight STRIDED_COST) becomes both coalesced
    expect(math.abs(rows[1].predicted.speedup - (1 + rank.STRIDED_COST) / 2) < 1e-9):equals(true)
    local kernels = {}
    for _, r in ipairs(rows) do
      if not r.schedule:find("stage") then expect(r.predicted.speedup < rows[1].predicted.speedup):equals(true) end
      -- map() stage() emits what stage() does (the exchange sets the geometry): one row a kernel
      expect(kernels[r.source]):is_nil()
      kernels[r.source] = r.schedule
    end
  end)

  it("sees atomics privatized, quadratic prefix loops scanned, walks back to a segment's start scanned, wide accesses on streams", function()
    expect(top("histogram")):contains("privatize")
    expect(top("scan_rows")):contains("scan")
    expect(top("segmented_scan")):contains("segscan(")
    expect(top("elementwise_chain")):contains("vectorize")
  end)
end)

describe("a schedule that cannot launch", function()
  it("where no fold helps, is not proposed, and the decision says which size and which limit", function()
    local tw, src = task("spmm_csr") -- 131072 rows: a block a row would need grid.y past 65535
    local state = fake_state()
    state.workload = tw
    -- a fold past CUDA's limit is refused: nothing makes these launch
    local blocks = schedules.FOLD_BLOCKS
    schedules.FOLD_BLOCKS = 65536
    local ok, rows = pcall(schedules.rows, state, { source = src, sha256 = "s" })
    schedules.FOLD_BLOCKS = blocks
    if not ok then error(rows, 0) end
    expect(#rows):at_least(1)
    for _, r in ipairs(rows) do expect(r.schedule:find("^split_reduce") == nil):equals(true) end
    local said
    for _, d in ipairs(state.decided) do
      if d.fields.why:find("cannot launch") then said = d.fields.why end
    end
    expect(said):contains("at the bench size")
    expect(said):contains("grid.y = 131072 is outside 1..65535")
  end)
end)

describe("a scheduled node", function()
  it("extends its sequence with primitives it has not used, and offers the other sequences instead of it", function()
    local state = fake_state()
    local first = schedules.rows(state, { source = matmul, sha256 = "m" }, { resources = false })
    local map
    for _, r in ipairs(first) do if r.schedule:match("^map%([^)]*%)$") and r.schedule:find("x=j") then map = r end end
    expect(map ~= nil):equals(true)
    local node = { source = map.source, sha256 = "after-map", kir = map.kir }
    local rows = schedules.rows(state, node, { resources = false })
    local extensions, alternatives, texts = 0, 0, {}
    for _, r in ipairs(rows) do
      expect(texts[r.schedule]):is_nil() -- each sequence once
      texts[r.schedule] = true
      expect(r.schedule ~= map.schedule):equals(true) -- never the node's own
      if r.instead then
        alternatives = alternatives + 1
        expect(r.instead):equals(map.schedule)
        expect(r.kir.text):equals(r.schedule)
        expect(r.predicted.why):contains("instead of " .. map.schedule)
      else
        extensions = extensions + 1
        expect(r.schedule:sub(1, #map.schedule + 1)):equals(map.schedule .. " ")
        expect(select(2, r.schedule:gsub("map%(", ""))):equals(1) -- map is not applied twice
        expect(r.predicted.why):contains("after " .. map.schedule)
      end
    end
    expect(extensions):at_least(1)
    -- the other map (lanes along i) and map with a stage are neighbours the search can still measure
    expect(texts["map(block=32x8,x=i,y=j)"]):equals(true)
    expect(alternatives):at_least(5)
  end)
end)

describe("the compiler's report on the first rows", function()
  -- A stand-in for NVRTC: a register tile takes 200 registers; under
  -- __launch_bounds__(T, K) ptxas fits 65536 / (T x K), and spills at K = 2
  -- (as it may); a double-buffered stage does not compile.
  local function fake_compile(log)
    return function(source)
      log[#log + 1] = source
      if source:find("buf_", 1, true) then return nil, { verdict = "compile_error", message = "schedule.cu(9): error: too much shared data" } end
      local regs = source:find("sum_1_1", 1, true) and 200 or 40
      local spills = 0
      local t, k = source:match("__launch_bounds__%((%d+), (%d+)%)")
      if t then
        regs = math.min(regs, 65536 // (tonumber(t) * tonumber(k)))
        if k == "2" then spills = 8 end
      end
      return { functions = { matmul = { registers = regs, smem = 8192, barriers = 1, spill_stores = spills } } }
    end
  end

  -- the example's matmul runs blocks of 32 x 32: 1024 threads
  local function report_rows(compile, mode)
    local state = fake_state()
    state.ctx = { arch = "sm_90" }
    local node = { source = matmul, sha256 = "m", record = { stages = { compile = { occupancy = 1 } } } }
    local rows = schedules.rows(state, node, { compile = compile, resources = mode })
    local by, at = {}, {}
    for i, r in ipairs(rows) do by[r.schedule], at[r.schedule] = r, i end
    return state, rows, by, at
  end

  it("drops what does not compile or cannot launch, with a skipped decision each; a bound makes a block of 1024 launch", function()
    local log = {}
    local state, rows, by, at = report_rows(fake_compile(log))
    for _, r in ipairs(rows) do
      if r.resources then expect(r.schedule:find("buffers=2", 1, true)):is_nil() end
    end
    local why = {}
    for _, d in ipairs(state.decided) do why[d.row.schedule] = d.fields.why end
    expect(why["register_tile(4,4) stage(buffers=2)"]):contains("does not compile: schedule.cu(9): error: too much shared data")
    -- 200 registers x 1024 threads: no block fits, as the device would say
    expect(by["register_tile(4,4) stage()"]):is_nil()
    expect(why["register_tile(4,4) stage()"]):contains(
      "cannot launch: occupancy 0 (200 registers a thread, 0 blocks a multiprocessor, bound by registers)")
    -- bound(blocks=1): ptxas fits 64 registers, one block of 32 warps
    local bounded = by["register_tile(4,4) stage() bound(blocks=1)"]
    expect(bounded.resources.registers):equals(64)
    expect(bounded.resources.occupancy):equals(0.5)
    expect(bounded.source):contains("__launch_bounds__(1024, 1) matmul(")
    expect(bounded.because[#bounded.because]):contains("so that 1 blocks fit")
    expect(at[bounded.schedule]):at_most(3)
    -- only rows with a register tile or a stage are compiled
    for _, src in ipairs(log) do
      expect(src:find("sum_1_1", 1, true) ~= nil or src:find("__syncthreads", 1, true) ~= nil):is_true()
    end
  end)

  it("predicts low occupancy down against the node's, and offers a bound that raises it without spills", function()
    local _, _, by, at = report_rows(fake_compile({}), "full")
    local plain = {}
    for _, r in ipairs(schedules.rows(fake_state(), { source = matmul, sha256 = "m" }, { resources = false })) do
      plain[r.schedule] = r.predicted.speedup
    end
    -- 256 threads at 200 registers: one block, occupancy 0.125
    local tile = by["map(block=32x8,x=j,y=i) register_tile(4,4) stage()"]
    expect(tile.resources.occupancy):equals(0.125)
    expect(tile.predicted.why):contains("occupancy 0.125 (200 registers a thread, 1 blocks a multiprocessor, bound by registers)")
    expect(tile.predicted.speedup < plain[tile.schedule]):is_true()
    -- four blocks at 64 registers: occupancy 0.5, no penalty, ranked above it
    local bounded = by[tile.schedule .. " bound(blocks=4)"]
    expect(bounded.resources.occupancy):equals(0.5)
    expect(bounded.predicted.speedup):equals(plain[tile.schedule])
    expect(at[bounded.schedule] < at[tile.schedule]):is_true()
    -- the bound that spills (K = 2 in the stand-in) is not offered
    expect(by[tile.schedule .. " bound(blocks=2)"]):is_nil()
  end)

  it("on emu reads only whether a block of 512 threads or more launches, and predicts nothing down", function()
    local log = {}
    local state, _, by = report_rows(fake_compile(log), "launch")
    -- the 32 x 32 blocks are read, the 32 x 8 ones are not (256 threads of any registers fit)
    expect(by["register_tile(4,4) stage()"]):is_nil()
    expect(by["register_tile(4,4) stage() bound(blocks=1)"].resources.registers):equals(64)
    local small = by["map(block=32x8,x=j,y=i) register_tile(4,4) stage()"]
    expect(small.resources):is_nil()
    expect(by["map(block=32x8,x=j,y=i) register_tile(4,4) stage() bound(blocks=4)"]):is_nil()
    for _, src in ipairs(log) do expect(src):contains("block(TILE, TILE)") end
    expect(#state.decided):at_least(1)
  end)

  it("never offers a scheduled node its own sequence again, bounded as it was", function()
    local _, _, by = report_rows(fake_compile({}))
    local kept = by["register_tile(4,4) stage() bound(blocks=1)"]
    local state = fake_state()
    state.ctx = { arch = "sm_90" }
    local node = { source = kept.source, sha256 = "after-bound", kir = kept.kir }
    local rows = schedules.rows(state, node, { compile = fake_compile({}), resources = "full" })
    for _, r in ipairs(rows) do expect(r.schedule ~= kept.schedule):is_true() end
    -- the row instead of it, unbounded, was read (it cannot launch), and its bound is the node itself
    local read
    for _, d in ipairs(state.decided) do
      if d.row.schedule == "register_tile(4,4) stage()" and d.fields.why:find("cannot launch", 1, true) then read = true end
    end
    expect(read):equals(true)
  end)

  it("is not read when the caller says so", function()
    for _, r in ipairs(schedules.rows(fake_state(), { source = matmul, sha256 = "m" }, { resources = false })) do
      expect(r.resources):is_nil()
      expect(r.schedule:find("bound(", 1, true)):is_nil()
    end
  end)
end)

describe("the klineage policy's choice", function()
  local policy = require "klineage.search.policies.klineage"
  local read, touched
  -- judged as the engine gives it: lazy results, the candidates, their count
  local function results(list, held_back)
    read, touched = 0, {}
    local candidates = {}
    for i = 1, #list do candidates[i] = { held_back = held_back and held_back[i] or nil } end
    return setmetatable({ candidates = candidates }, {
      __index = function(_, i)
        if list[i] then read, touched[i] = math.max(read, i), true end
        return list[i]
      end,
      __len = function() return #list end })
  end
  local function timed(s) return { accepted = s ~= nil, effect = { measured = s ~= nil, speedup = s } } end

  it("where timed, judges from the first accepted to two past it and keeps the fastest", function()
    local j = results({ timed(nil), timed(1.2), timed(nil), timed(3.0), timed(9.0) })
    expect(policy.choose(nil, j).effect.speedup):equals(3.0)
    expect(read):equals(4)
  end)
  it("where nothing is timed, keeps the first accepted and judges no further", function()
    local untimed = { accepted = true, effect = { measured = false } }
    local j = results({ timed(nil), untimed, untimed })
    expect(policy.choose(nil, j)):equals(untimed)
    expect(read):equals(2)
  end)
  it("does not judge a schedule the model predicts slower than the kernel now, and keeps the skills", function()
    local skill = { skill = "launch_bounds" }
    local state = {
      skills = function() return { skill } end,
      schedules = function()
        return { { skill = "schedule:a", predicted = { speedup = 2.0 } }, { skill = "schedule:b", predicted = { speedup = 0.6 } },
                 { skill = "schedule:c", predicted = { speedup = 1.0 } } }
      end,
      rank = function(_, rows) return rows end,
    }
    local names = {}
    for _, r in ipairs(policy.propose(state)) do names[#names + 1] = r.skill end
    expect(table.concat(names, " ")):equals("launch_bounds schedule:a schedule:c")
  end)
  it("keeps none when none is accepted", function()
    expect(policy.choose(nil, results({ timed(nil), timed(nil) }))):is_nil()
  end)
  it("gives up after 8 judged with none accepted; a row skipped without a cycle does not count", function()
    local list = {}
    for i = 1, 12 do list[i] = timed(nil) end
    list[12] = timed(5.0)
    local kept, why = policy.choose(nil, results(list))
    expect(kept):is_nil()
    expect(why):equals("none of the 8 best ranked candidates was accepted")
    expect(read):equals(8)
    local skipped = { accepted = false, verdict = "skipped", effect = { measured = false } }
    list = { skipped, skipped, skipped }
    for i = 4, 10 do list[i] = timed(nil) end
    list[11] = timed(2.0)
    expect(policy.choose(nil, results(list)).effect.speedup):equals(2.0)
  end)
  it("after 8 with none accepted, judges the skills held back (ranked last), not the ranked rest", function()
    local list, held = {}, {}
    for i = 1, 10 do list[i] = timed(nil) end
    list[9] = timed(4.0) -- a ranked row past the patience: never judged
    list[11], held[11] = timed(nil), "guard: launch.threads ≥ 640"
    list[12], held[12] = timed(1.8), "never seen to help"
    list[13], held[13] = timed(2.5), "never seen to help"
    local judged = results(list, held)
    local kept = policy.choose(nil, judged)
    expect(kept.effect.speedup):equals(1.8) -- the first held back accepted: each costs a cycle
    expect(read):equals(12)
    expect(touched[9]):is_nil()  -- ranked rows past the patience: not judged
    expect(touched[10]):is_nil()
    expect(touched[11]):equals(true)
    list[12], list[13] = timed(nil), timed(nil)
    expect(select(2, policy.choose(nil, results(list, held))))
      :equals("none of the 8 best ranked candidates, nor a skill held back, was accepted")
  end)
  it("judges no held-back row once a ranked one is accepted, even with the width not reached", function()
    local list, held = { timed(nil), timed(1.3) }, {}
    list[3], held[3] = timed(3.0), "never seen to help"
    expect(policy.choose(nil, results(list, held)).effect.speedup):equals(1.3)
    expect(read):equals(2)
  end)
end)

describe("the schedule policy", function()
  it("keeps a schedule on matmul under klineage optimize on emu, on the model's prediction, said in the decision", function()
    local context = require "klineage.device.context"
    local journal = require "klineage.store.journal"
    local search = require "klineage.search"
    local root = scratch_dir()
    local ctx = assert(context.new { backend = "emu", journal = root, run_id = "s", budget = 12, workloads = { w } })
    local summary = assert(search.run(ctx, w, { input = { source = matmul, label = "matmul.cu" }, direction = "forward",
                                                policy = "schedule", skills = {} }))
    ctx:close()
    expect(#summary.steps):at_least(1)
    expect(summary.steps[1].skill):contains("schedule:")
    local kept
    for _, r in ipairs(assert(journal.read(root .. "/s/journal.jsonl"))) do
      if r.kind == "decision" and r.status == "applied" then kept = r end
    end
    expect(kept.why):contains("not measured: kept on the static model's prediction of")
    expect(type(kept.schedule)):equals("string")
  end)

  it("halves its points: the model scores all, the gate judges fewer each round", function()
    local halving = require "klineage.search.halving"
    local judged = 0
    local best, rounds = halving.run({ 1, 2, 3, 4, 5, 6, 7, 8 }, {
      function(p) return p end,                               -- the model: free
      function(p) judged = judged + 1 return 10 - p end,      -- the gate: a cycle a point
      function(p) judged = judged + 1 return p end })
    expect(rounds[1].scored):equals(8)
    expect(rounds[2].scored):equals(4)
    expect(rounds[3].scored):equals(2)
    expect(judged):equals(6)
    expect(best):equals(6)
  end)
end)

describe("the schedule skills' prior", function()
  -- a schedule skill as the learner writes one (skills/learn.lua), its conditions as data
  local function skill(family, preconditions, guards, extra)
    local r = { id = "schedule-" .. family, pattern = { schedule = family }, materialize = { schedule = family, params = { tile = 32 } },
                preconditions = preconditions or {}, guards = guards or {},
                effect = { speedup = { median = 1.4, min = 1.1, max = 2, n = 5 } },
                confidence = { supporting = 5, contradicting = 1, lineages = 2, level = "medium" } }
    for k, v in pairs(extra or {}) do r[k] = v end
    return r
  end
  local function state_with(records, values)
    local state = fake_state()
    state.skill_records = function() return records end
    state.facts = function() return values end
    return state
  end

  it("blocks a family where a blocking condition speaks against the kernel, and says so in a skipped decision", function()
    local state = state_with({ skill("stage", { { "launch.blocks", ">=", 1e9, blocks = true } }) }, { ["launch.blocks"] = 4096 })
    local rows = schedules.rows(state, { source = matmul, sha256 = "m" }, { resources = false })
    for _, r in ipairs(rows) do expect(r.schedule:find("stage") == nil):equals(true) end
    local said
    for _, d in ipairs(state.decided) do if d.fields.why:find("schedule-stage is blocked here", 1, true) then said = d end end
    expect(said ~= nil):equals(true)
    expect(said.fields.status):equals("skipped")
  end)

  it("ranks a family down for each condition that only ranks and speaks against it; unknown and _after ones say nothing", function()
    local records = { skill("stage", { { "launch.blocks", ">=", 1e9, blocks = false }, { "registers_after", "<", 1, blocks = true },
                                       { "role.intensity", ">=", 1, blocks = true } }) }
    local rows = schedules.rows(state_with(records, { ["launch.blocks"] = 4096 }), { source = matmul, sha256 = "m" }, { resources = false })
    local staged, plain
    for _, r in ipairs(rows) do
      if r.schedule == "stage()" then staged = r end
      if r.schedule == "map(block=32x8,x=j,y=i)" then plain = r end
    end
    expect(staged.prior.factor):equals(0.8)
    expect(staged.prior.skills):equals({ "schedule-stage" })
    expect(staged.prior.why):contains("1 condition against it here")
    expect(plain.prior.factor):equals(1) -- no skill of map here
    -- a family that never helped is ranked, not blocked, on evidence from fewer than three lineages
    local never = skill("stage", {}, {}, { confidence = { supporting = 0, contradicting = 2, lineages = 1, level = "low" } })
    local again = schedules.rows(state_with({ never }, {}), { source = matmul, sha256 = "m" }, { resources = false })
    local found
    for _, r in ipairs(again) do if r.schedule == "stage()" then found = r end end
    expect(found ~= nil):equals(true)
  end)
end)
