-- The gate end to end on the fake worker (a real child process speaking
-- the real protocol, kernels in Lua): compile, correctness against the
-- baseline over sizes and seeds, and the profile stage.
local gate = require "klineage.gate"
local workload = require "klineage.workload"
local pool_mod = require "klineage.device.worker.pool"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local fixture = here .. "/../fixtures/workloads/saxpy"

local OFF_BY_ONE = [[
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void saxpy_off_by_one(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n - 1) y[i] = a * x[i] + y[i];
}
]]

describe("gate.evaluate on the fake worker", function()
  local w = assert(workload.load(fixture))
  local pool = assert(pool_mod.new { backend = "fake", timeout = 30 })
  local ctx = assert(require("klineage.device.context").new { journal = false, pool = pool })

  it("passes the baseline against itself, over every size and seed", function()
    local r = gate.evaluate(ctx, { file = fixture .. "/v0.cu" }, w)
    if r.verdict ~= "ok" then fail("verdict %s: %s", r.verdict, tostring((r.stages.correct or r.stages.compile or {}).message)) end
    expect(r.stages.compile.verdict):equals("ok")
    expect(r.stages.compile.functions.saxpy.registers):at_least(1)
    expect(r.stages.correct.sizes):equals(3)
    -- 3 sizes x 3 seeds, and a seed drawn at random at the 2 test sizes
    expect(#r.stages.correct.trials):equals(11)
    expect(#r.drawn_seeds):equals(1)
    expect(r.stages.correct.trials[4].seed):equals(r.drawn_seeds[1])
    expect(r.stages.profile.source):equals("host")
    expect(r.stages.profile.recheck.pass):is_true()
    expect(r.stages.profile.gflops > 0):is_true()
  end)

  it("fails an off-by-one kernel with the first bad index", function()
    local r = gate.evaluate(ctx, { source = OFF_BY_ONE, file = "off_by_one.cu", kernel = "saxpy_off_by_one" }, w)
    expect(r.verdict):equals("wrong")
    expect(r.stages.correct.message):contains("y: 1 of 1000 elements off (first at index 999")
  end)

  it("reports a compile error with its location", function()
    local r = gate.evaluate(ctx, { source = 'extern "C" __global__ void saxpy(int n) { n = q; }', file = "bad.cu" }, w)
    expect(r.verdict):equals("compile_error")
    expect(r.stages.compile.message):contains("bad.cu:1:")
  end)

  it("refuses a kernel whose requires leaves fewer than two sizes", function()
    local src = "// @kl requires n % 1048576 == 0\n" .. assert(io.open(fixture .. "/v0.cu")):read("a")
    local r = gate.evaluate(ctx, { source = src, file = "picky.cu" }, w)
    expect(r.verdict):equals("too_few_sizes")
    expect(#r.stages.correct.skipped):equals(2)
  end)

  it("charges a compile error and a refused candidate to the budget", function()
    local small = assert(require("klineage.device.context").new { journal = false, pool = pool, budget = 2 })
    local r1 = gate.evaluate(small, { source = "not CUDA at all", file = "junk.cu" }, w)
    expect(r1.verdict):equals("compile_error")
    local r2 = gate.evaluate(small, { file = "/nonexistent/k.cu" }, w)
    expect(r2.verdict):equals("bad_input")
    expect(r2.stages.compile.message):contains("/nonexistent/k.cu")
    expect((small:spent())):equals(2)
    local r3 = gate.evaluate(small, { file = fixture .. "/v0.cu" }, w)
    expect(r3.verdict):equals("budget_exhausted")
    expect(r3.blame):equals("budget")
    expect(r3.stages.compile):is_nil()
    small:close()
  end)
  ctx:close(); pool:close()
end)

describe("gate.compare on the fake worker", function()
  local w = assert(workload.load(fixture))
  local pool = assert(pool_mod.new { backend = "fake", timeout = 30 })
  local ctx = assert(require("klineage.device.context").new { journal = false, pool = pool })
  it("times two candidates interleaved and gives a verdict", function()
    local c = assert(gate.compare(ctx, { file = fixture .. "/v0.cu" }, { file = fixture .. "/v0.cu" }, w,
      { rounds = 2, block = 3 }))
    expect(#c.samples.a):equals(6)
    expect(#c.samples.b):equals(6)
    expect(c.outcome == "no_difference" or c.outcome == "faster" or c.outcome == "slower"):is_true()
    expect(c.speedup > 0):is_true()
  end)
  ctx:close(); pool:close()
end)

describe("gate: inputs built on the host", function()
  it("are built and sent once per size and seed, then refilled by the worker", function()
    local dir = os.tmpname() .. ".d"
    assert(os.execute("mkdir -p '" .. dir .. "' && cp '" .. fixture .. "/v0.cu' '" .. dir .. "/'"))
    local h = assert(io.open(dir .. "/workload.lua", "w"))
    h:write([[
return {
  name = "saxpy_custom", kernel = "saxpy",
  -- n = 20000: 80 KB, sent through a spooled file (over the 64 KiB inline limit)
  params = { n = 20000, a = 2.0 }, test_params = { { n = 1000 }, { n = 333 } },
  buffers = {
    x = { "f32", "n", init = function(p, rng)
      local t = {}
      for i = 1, p.n do t[i] = rng:uniform() end
      return t
    end },
    y = { "f32", "n", init = "normal", output = true },
  },
  args = { "n", "a", "x", "y" }, tolerance = { rtol = 1e-6, atol = 1e-7 },
  flops = "2*n", bytes = "12*n", lineage = { "v0.cu" },
}
]])
    h:close()
    -- The spec runs sandboxed, out of the test's reach: its init is
    -- counted from outside, around the wrapper the gate calls.
    local inits = 0
    local function counted(w)
      local b = w.buffer_by_name.x
      local inner = b.init
      b.init = function(...) inits = inits + 1 return inner(...) end
      return w
    end
    local w = counted(assert(workload.load(dir)))
    local pool = assert(pool_mod.new { backend = "fake", timeout = 30 })
    local ctx = assert(require("klineage.device.context").new { journal = false, pool = pool })
    local r = gate.evaluate(ctx, { file = dir .. "/v0.cu" }, w, { max_seconds = 0.05, random_seeds = 0 })
    expect(r.verdict):equals("ok")
    -- 3 sizes x 3 seeds, plus the profile's recheck seed: each built once,
    -- though every trial fills its inputs twice (no drawn seed here: it
    -- would be built anew by each evaluation)
    expect(inits):equals(10)
    r = gate.evaluate(ctx, { file = dir .. "/v0.cu" }, w, { max_seconds = 0.05, random_seeds = 0 })
    expect(r.verdict):equals("ok")
    expect(inits):equals(10)
    -- an edited spec is another spec: its inputs are built again
    local text = assert(io.open(dir .. "/workload.lua")):read("a")
    h = assert(io.open(dir .. "/workload.lua", "w"))
    h:write((text:gsub("rng:uniform%(%)", "0.5 * rng:uniform()")))
    h:close()
    local w2 = counted(assert(workload.load(dir)))
    expect(w2.sha256 ~= w.sha256):is_true()
    r = gate.evaluate(ctx, { file = dir .. "/v0.cu" }, w2, { max_seconds = 0.05, random_seeds = 0 })
    expect(r.verdict):equals("ok")
    expect(inits):equals(20)
    ctx:close(); pool:close()
  end)
end)

describe("gate.evaluate_all on two fake workers", function()
  it("spreads the candidates over both workers and keeps their order", function()
    local w = assert(workload.load(fixture))
    local pool = assert(pool_mod.new { backend = "fake", devices = { "a", "b" }, timeout = 30 })
    local ctx = assert(require("klineage.device.context").new { journal = false, pool = pool })
    local v0 = { file = fixture .. "/v0.cu" }
    local bad = { source = OFF_BY_ONE, file = "off_by_one.cu", kernel = "saxpy_off_by_one" }
    local started, finished = {}, {}
    local records = gate.evaluate_all(ctx, { v0, bad, v0, v0, bad }, w, { max_seconds = 0.05,
      before = function(i) started[#started + 1] = i end,
      after = function(i) finished[#finished + 1] = i end })
    expect(#records):equals(5)
    local verdicts, workers = {}, {}
    for i, r in ipairs(records) do
      verdicts[i] = r.verdict
      workers[r.worker] = true
    end
    expect(verdicts):equals({ "ok", "wrong", "ok", "ok", "wrong" })
    expect(workers):equals({ [1] = true, [2] = true })
    expect(started):equals({ 1, 2, 3, 4, 5 })
    expect(#finished):equals(5)
    ctx:close(); pool:close()
  end)

  it("runs a spec's run, sandboxed, while its launches wait on a worker", function()
    -- every launch yields to the scheduler from inside the spec's run
    local dir = os.tmpname()
    os.remove(dir)
    assert(require("kl.proc").mkdir_p(dir))
    assert(io.open(dir .. "/v0.cu", "w")):write(assert(io.open(fixture .. "/v0.cu")):read("a")):close()
    local text = assert(io.open(fixture .. "/workload.lua")):read("a")
      :gsub('lineage = { "v0.cu" },', 'lineage = { "v0.cu" },\n  run = function(ctx, p) ctx:launch({}) ctx:launch({ a = 0.5 * p.a }) end,')
    assert(io.open(dir .. "/workload.lua", "w")):write(text):close()
    local w = assert(workload.load(dir))
    local pool = assert(pool_mod.new { backend = "fake", devices = { "a", "b" }, timeout = 30 })
    local ctx = assert(require("klineage.device.context").new { journal = false, pool = pool })
    local v0 = { file = dir .. "/v0.cu" }
    local bad = { source = OFF_BY_ONE, file = "off_by_one.cu", kernel = "saxpy_off_by_one" }
    local records = gate.evaluate_all(ctx, { v0, bad, v0, bad }, w, { max_seconds = 0.05 })
    local verdicts = {}
    for i, r in ipairs(records) do verdicts[i] = r.verdict end
    expect(verdicts):equals({ "ok", "wrong", "ok", "wrong" })
    expect(debug.gethook()):is_nil() -- no hook left on the engine's thread
    ctx:close(); pool:close()
  end)
end)
