-- The gate on a GPU: a correct kernel passes with a CUPTI profile inside
-- the roofline, an off-by-one kernel fails, and every adversarial kernel of
-- tests/adversarial is rejected with the verdict its first line names, or
-- (timing/) is timed doing the whole work.
local gate = require "klineage.gate"
local workload = require "klineage.workload"
local pool_mod = require "klineage.device.worker.pool"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local fixture = here .. "/../fixtures/workloads/saxpy"
local adversarial = here .. "/../adversarial"

describe("the gate on the cuda backend", function()
  local w = assert(workload.load(fixture))
  local pool = assert(pool_mod.new { backend = "cuda", timeout = 120 })
  local ctx = assert(require("klineage.device.context").new { journal = false, pool = pool })
  local ceilings = assert(ctx:ceilings())

  it("measures plausible ceilings", function()
    io.write(string.format("      ceilings: copy %.0f GB/s, read %.0f GB/s, fp32 %.1f TFLOP/s\n",
      ceilings.copy_gbps, ceilings.read_gbps, ceilings.fp32_tflops))
    expect(ceilings.copy_gbps):at_least(500)
    expect(ceilings.fp32_tflops):at_least(5)
  end)

  it("passes a correct kernel and profiles it inside the roofline", function()
    local r = gate.evaluate(ctx, { file = fixture .. "/v0.cu" }, w, { metrics = true })
    if r.verdict ~= "ok" then fail("%s: %s", r.verdict, require("cjson").encode(r.stages)) end
    local p = r.stages.profile
    expect(p.source):equals("cupti")
    expect(p.pct_of_roofline):at_most(100 / gate.ROOFLINE_MARGIN)
    expect(p.recheck.pass):is_true()
    expect(r.stages.metrics.values["dram__bytes_read.sum"] > 0):is_true()
  end)

  it("fails an off-by-one kernel", function()
    local src = assert(io.open(fixture .. "/v0.cu")):read("a"):gsub("if %(i < n%)", "if (i < n - 1)")
    local r = gate.evaluate(ctx, { source = src, file = "off_by_one.cu" }, w, { profile = false })
    expect(r.verdict):equals("wrong")
  end)

  it("compares a kernel with itself, interleaved, and finds no real difference", function()
    local c = assert(gate.compare(ctx, { file = fixture .. "/v0.cu" }, { file = fixture .. "/v0.cu" }, w))
    io.write(string.format("      v0 vs v0: speedup %.4f [%.4f, %.4f], %s\n", c.speedup, c.ci[1], c.ci[2], c.outcome))
    expect(c.speedup):near(1.0, 0.05)
  end)

  for _, name in ipairs({ "no_write", "mutate_input", "cache_results", "zeros", "half_precision", "skip_half", "device_launch",
                          "oob_past_end" }) do
    it("rejects " .. name, function()
      local file = adversarial .. "/" .. name .. ".cu"
      local want = assert(io.open(file)):read("l"):match("expect: ([%w_]+)")
      local r = gate.evaluate(ctx, { file = file }, w)
      check(r.verdict == want, "verdict %s, want %s", r.verdict, want)
    end)
  end
  ctx:close(); pool:close()
end)

-- The poly fixture at a size where skipping the arithmetic shows: each
-- kernel of tests/adversarial/timing/ skips it by reading what an earlier
-- launch left behind, and must be timed doing it all.
local function poly_at_scale()
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p " .. dir))
  local text = assert(io.open(here .. "/../fixtures/workloads/poly/workload.lua")):read("a")
  text = text:gsub("params = { n = 4096, degree = 64 }", "params = { n = 1 << 22, degree = 256 }")
  local h = assert(io.open(dir .. "/workload.lua", "w"))
  h:write(text)
  h:close()
  assert(os.execute("cp " .. here .. "/../fixtures/workloads/poly/v0.cu " .. dir .. "/v0.cu"))
  return assert(workload.load(dir)), dir
end

describe("timed samples on the cuda backend", function()
  local w, dir = poly_at_scale()
  local pool = assert(pool_mod.new { backend = "cuda", timeout = 120 })
  local ctx = assert(require("klineage.device.context").new { journal = false, pool = pool })
  local v0 = { file = dir .. "/v0.cu" }
  local honest = gate.evaluate(ctx, v0, w)
  it("times the honest poly", function()
    check(honest.verdict == "ok", "%s: %s", honest.verdict, tostring((honest.stages.profile or {}).message))
    io.write(string.format("      poly v0: %.4f ms\n", honest.stages.profile.median_ms))
  end)
  for _, c in ipairs({ { "skip_written", "poly_skip_written" }, { "own_last_output", "poly_own_last" },
                       { "memo_inputs", "poly_memo" } }) do
    local cheat = { file = adversarial .. "/timing/" .. c[1] .. ".cu", kernel = c[2] }
    it(c[1] .. " passes, timed doing the whole work: no faster than v0", function()
      local r = gate.evaluate(ctx, cheat, w)
      check(r.verdict == "ok", "%s: %s", r.verdict, tostring((r.stages.profile or r.stages.correct or {}).message))
      local cmp = assert(gate.compare(ctx, v0, cheat, w, { rounds = 4, block = 3 }))
      io.write(string.format("      %s: %.4f ms; against v0 %.3fx [%.3f, %.3f], %s\n", c[1], r.stages.profile.median_ms,
        cmp.speedup, cmp.ci[1], cmp.ci[2], cmp.outcome))
      check(cmp.outcome ~= "faster", "%s is %.3fx faster than v0", c[1], cmp.speedup)
    end)
    -- the control: timed on samples not set up again, it is fast, so the
    -- case above checks something
    it(c[1] .. " is fast on samples that are not set up again", function()
      local k = assert(require("klineage.gate.kernel").prepare(cheat, w, ctx.arch))
      local s = require("klineage.gate.session").new { pool = pool }
      s:load(k)
      local steps, setup = s:launches_at(k, w, w.params)
      if c[1] == "memo_inputs" then
        for _, step in ipairs(setup) do if step.op == "init" then step.seed, step.seed_step = 1, 0 end end
      else
        setup = nil
      end
      local t = s:call { op = "time", sequence = steps, before_sample = setup, min_samples = 10, max_samples = 10 }
      io.write(string.format("      %s without the setup: %.4f ms\n", c[1], t.median_ms))
      check(t.median_ms < 0.5 * honest.stages.profile.median_ms, "%.4f ms, v0 %.4f ms", t.median_ms,
        honest.stages.profile.median_ms)
    end)
  end
  ctx:close(); pool:close()
  os.execute("rm -rf " .. dir)
end)

describe("hostile kernels and specs on the cuda backend", function()
  local pool = assert(pool_mod.new { backend = "cuda", timeout = 120 })
  local ctx = assert(require("klineage.device.context").new { journal = false, pool = pool })
  local sentinel = assert(workload.load(here .. "/../fixtures/workloads/sentinel"))

  it("passes an honest kernel whose spec counts far more flops than it does", function()
    local w = assert(workload.load(adversarial .. "/bounds/fewer_flops"))
    local r = gate.evaluate(ctx, { file = adversarial .. "/bounds/fewer_flops/v0.cu" }, w)
    check(r.verdict == "ok", "%s: %s", r.verdict, tostring((r.stages.profile or {}).message))
    expect(r.stages.profile.anticheat.bound):contains("compulsory bytes")
  end)

  it("catches the element neither run writes: each run has its own poison", function()
    local c = { file = adversarial .. "/poison/lazy_sentinel.cu" }
    local r = gate.evaluate(ctx, c, sentinel, { baseline = c })
    expect(r.verdict):equals("wrong")
  end)

  it("catches a write 12 KiB below the output", function()
    local r = gate.evaluate(ctx, { file = adversarial .. "/reference_copy/overwrite_below.cu" }, sentinel)
    expect(r.verdict):equals("out_of_bounds")
  end)

  it("goes on judging after a write out of bounds", function()
    local r = gate.evaluate(ctx, { file = here .. "/../fixtures/workloads/sentinel/v0.cu" }, sentinel)
    expect(r.verdict):equals("ok")
  end)
  ctx:close(); pool:close()
end)
