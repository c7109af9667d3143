-- Every timed sample starts from inputs of its own and freshly set-up
-- outputs (gate/session.lua, sample_setup): a kernel that reads what an
-- earlier launch left behind, to skip its work, is timed doing the whole
-- work. On the fake worker, whose kernels are Lua: it counts the elements
-- each sample computed (host times on a busy machine are too noisy to
-- judge by); tests/gpu/gate_spec.lua times the CUDA kernels on the H200.
local gate = require "klineage.gate"
local kernel = require "klineage.gate.kernel"
local session = require "klineage.gate.session"
local workload = require "klineage.workload"
local pool_mod = require "klineage.device.worker.pool"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local fixture = here .. "/../fixtures/workloads/poly"
local adversarial = here .. "/../adversarial/timing"

-- Each cheat, its entry, and the setup under which it would be fast: none
-- at all, or the outputs set up again from the same inputs every sample.
local CHEATS = {
  { file = "skip_written", entry = "poly_skip_written", fast_with = "nothing" },
  { file = "own_last_output", entry = "poly_own_last", fast_with = "nothing" },
  { file = "memo_inputs", entry = "poly_memo", fast_with = "the same inputs" },
}
local OPTS = { min_samples = 5, max_samples = 5 }

-- the fewest elements any sample computed
local function least(t)
  local m = math.huge
  for _, c in ipairs(t.computed) do m = math.min(m, c) end
  return m
end

describe("timed samples on the fake worker", function()
  local w = assert(workload.load(fixture))
  local pool = assert(pool_mod.new { backend = "fake", timeout = 60 })
  local ctx = assert(require("klineage.device.context").new { journal = false, pool = pool })
  local honest = gate.evaluate(ctx, { file = fixture .. "/v0.cu" }, w, OPTS)

  it("times the honest kernel", function()
    expect(honest.verdict):equals("ok")
    expect(#honest.stages.profile.samples_ms):equals(5)
    expect(least(honest.stages.profile)):equals(w.params.n)
  end)

  for _, c in ipairs(CHEATS) do
    local file = adversarial .. "/" .. c.file .. ".cu"
    it(c.file .. " passes and is timed doing the whole work", function()
      local r = gate.evaluate(ctx, { file = file, kernel = c.entry }, w, OPTS)
      expect(r.verdict):equals("ok")
      expect(least(r.stages.profile)):equals(w.params.n)
    end)

    -- The control: the same launches timed with samples set up as the
    -- gate did before (no setup, or no new inputs) are fast, so the case
    -- above checks something.
    it(c.file .. " is fast when samples are set up with " .. c.fast_with, function()
      local k = assert(kernel.prepare({ file = file, kernel = c.entry }, w, ctx.arch))
      local s = session.new { pool = pool }
      s:load(k)
      local steps, setup = s:launches_at(k, w, w.params)
      if c.fast_with == "nothing" then
        setup = nil
      else
        for _, step in ipairs(setup) do if step.op == "init" then step.seed, step.seed_step = 1, 0 end end
      end
      local t = s:call { op = "time", sequence = steps, before_sample = setup, min_samples = 5 }
      expect(least(t)):at_most(w.params.n // 10)
    end)
  end

  -- A buffer whose int bounds are expressions is generated again per
  -- sample with its bounds evaluated at the bench size.
  it("sets up buffers with expression bounds for every sample", function()
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p " .. dir))
    -- k rides along unread: the fake's poly reads its first five arguments
    local src = assert(io.open(fixture .. "/v0.cu")):read("a"):gsub("float %*z%)", "float *z, const int *k)")
    local h = assert(io.open(dir .. "/v0.cu", "w"))
    h:write(src)
    h:close()
    local text = assert(io.open(fixture .. "/workload.lua")):read("a")
    text = text:gsub('z = { "f32", "n", output = true },', 'z = { "f32", "n", output = true },\n    k = { "i32", "n", init = { "int", 0, "n - 1" } },')
      :gsub('args = { "n", "degree", "x", "y", "z" }', 'args = { "n", "degree", "x", "y", "z", "k" }')
    h = assert(io.open(dir .. "/workload.lua", "w"))
    h:write(text)
    h:close()
    local w2 = assert(workload.load(dir))
    local r = gate.evaluate(ctx, { file = dir .. "/v0.cu" }, w2, OPTS)
    os.execute("rm -rf " .. dir)
    expect(r.verdict):equals("ok")
    expect(least(r.stages.profile)):equals(w2.params.n)
  end)

  -- A run that reads a buffer back decides its launches from the data:
  -- every sample replays the same launches, on the inputs they were
  -- recorded with.
  it("replays a data-dependent run whole in every sample", function()
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p " .. dir .. " && cp " .. fixture .. "/v0.cu " .. dir .. "/v0.cu"))
    local text = assert(io.open(fixture .. "/workload.lua")):read("a")
    text = text:gsub('lineage = { "v0.cu" },', [[lineage = { "v0.cu" },
  run = function(ctx, p)
    ctx:launch({})
    if ctx:read("z", 0) == ctx:read("z", 0) then ctx:launch({}) end
  end,]])
    local h = assert(io.open(dir .. "/workload.lua", "w"))
    h:write(text)
    h:close()
    local w2 = assert(workload.load(dir))
    local r = gate.evaluate(ctx, { file = dir .. "/v0.cu" }, w2, OPTS)
    os.execute("rm -rf " .. dir)
    expect(r.verdict):equals("ok")
    expect(least(r.stages.profile)):equals(2 * w2.params.n)
  end)
  ctx:close(); pool:close()
end)
