-- cuBLAS and cuDNN through dlopen in the worker: each result matches the
-- lineage's v0 (so the call is set up right: row-major GEMM, NCHW
-- cross-correlation) and is timed like a kernel, as the bar the SGEMM and
-- conv2d lineages are judged against.
local gate = require "klineage.gate"
local w = assert(require("klineage.workload").load("sgemm"))
local conv = assert(require("klineage.workload").load("conv2d"))

describe("the vendor bar", function()
  local pool = assert(require("klineage.device.worker.pool").new { backend = "cuda", timeout = 300 })
  local ctx = assert(require("klineage.device.context").new { journal = false, pool = pool })
  it("checks and times cuBLAS SGEMM at every bench size", function()
    local results = assert(gate.vendor(ctx, w, { max_seconds = 1 }))
    expect(#results):at_least(1)
    for _, r in ipairs(results) do
      if r.verdict ~= "ok" then fail("%s: %s %s", r.label, r.verdict, tostring(r.message)) end
      io.write(string.format("      cuBLAS %s: %.4f ms, %.1f TFLOP/s\n", r.label, r.median_ms, r.gflops / 1e3))
      expect(r.gflops):at_least(1000)
    end
  end)
  it("checks and times cuDNN's FMA convolution at every bench size, where cuDNN loads", function()
    local results = assert(gate.vendor(ctx, conv, { max_seconds = 1 }))
    for _, r in ipairs(results) do
      if r.verdict == "unsupported" then
        return it.skip("cuDNN", tostring(r.message))
      end
      if r.verdict ~= "ok" then fail("%s: %s %s", r.label, r.verdict, tostring(r.message)) end
      io.write(string.format("      cuDNN %s: %.4f ms, %.1f TFLOP/s, algorithm %s\n", r.label, r.median_ms, r.gflops / 1e3,
        tostring(r.detail)))
      expect(math.type(r.detail)):equals("integer")
      expect(r.gflops):at_least(1000)
    end
  end)
  ctx:close(); pool:close()
end)
