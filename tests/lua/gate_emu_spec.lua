-- The gate on the emu backend (no GPU): correctness only, with the same
-- poisoning and comparison as on a GPU.
local gate = require "klineage.gate"
local workload = require "klineage.workload"
local pool_mod = require "klineage.worker.pool"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local fixtures = here .. "/../fixtures/workloads"

local LAZY = [[
// @kl launch grid(cdiv(n, 128)) block(128)
extern "C" __global__ void sentinel(int n, const float *x, int *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] > 0.f) out[i] = i;   // the -1 elements are left to chance
}
]]

describe("gate.evaluate on emu", function()
  local pool = assert(pool_mod.new { backend = "emu", timeout = 120 })
  local ctx = assert(require("klineage.context").new { journal = false, pool = pool })
  local w = assert(workload.load(fixtures .. "/sentinel"))

  it("passes the baseline and skips the profile stage with a reason", function()
    local r = gate.evaluate(ctx, { file = fixtures .. "/sentinel/v0.cu" }, w)
    expect(r.verdict):equals("ok")
    expect(r.backend):equals("emu")
  end)

  it("catches integer outputs left unwritten where the answer is -1", function()
    local r = gate.evaluate(ctx, { source = LAZY, file = "lazy.cu" }, w)
    expect(r.verdict):equals("wrong")
  end)

  it("reports a kernel that writes out of bounds as a fault, and goes on", function()
    local src = LAZY:gsub("if %(i < n && x%[i%] > 0%.f%) out%[i%] = i;", "out[i + 4096] = i;")
    local r = gate.evaluate(ctx, { source = src, file = "oob.cu" }, w)
    expect(r.verdict):equals("fault")
    local again = gate.evaluate(ctx, { file = fixtures .. "/sentinel/v0.cu" }, w)
    expect(again.verdict):equals("ok")
  end)
  ctx:close(); pool:close()
end)
