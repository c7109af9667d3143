-- The gate on a GPU: a correct kernel passes with a CUPTI profile inside
-- the roofline, an off-by-one kernel fails, and every adversarial kernel of
-- tests/adversarial is rejected with the verdict its first line names.
local gate = require "klineage.gate"
local workload = require "klineage.workload"
local pool_mod = require "klineage.worker.pool"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local fixture = here .. "/../fixtures/workloads/saxpy"
local adversarial = here .. "/../adversarial"

describe("the gate on the cuda backend", function()
  local w = assert(workload.load(fixture))
  local pool = assert(pool_mod.new { backend = "cuda", timeout = 120 })
  local ctx = assert(require("klineage.context").new { journal = false, pool = pool })
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

  for _, name in ipairs({ "no_write", "mutate_input", "cache_results", "zeros", "half_precision", "skip_half", "device_launch" }) do
    it("rejects " .. name, function()
      local file = adversarial .. "/" .. name .. ".cu"
      local want = assert(io.open(file)):read("l"):match("expect: ([%w_]+)")
      local r = gate.evaluate(ctx, { file = file }, w)
      check(r.verdict == want, "verdict %s, want %s", r.verdict, want)
    end)
  end
  ctx:close(); pool:close()
end)
