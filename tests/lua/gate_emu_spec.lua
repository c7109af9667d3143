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

-- Integer inits ({ "int", lo, hi }, filled by the worker) reached the emu
-- worker with float bounds from JSON and were refused as a bad_request;
-- and the buffers built on the host are only those whose init is a
-- function, one built from the other.
describe("gate.evaluate on emu: integer inits and inputs built on the host", function()
  local pool = assert(pool_mod.new { backend = "emu", timeout = 120 })
  local ctx = assert(require("klineage.context").new { journal = false, pool = pool })
  local w = assert(workload.load(fixtures .. "/csr_int"))

  it("fills integer buffers on emu and passes the baseline", function()
    local built = {}
    local real = workload.host_inputs
    workload.host_inputs = function(...)
      local data, f = real(...)
      local names = {}
      for name in pairs(data or {}) do names[#names + 1] = name end
      table.sort(names)
      built[#built + 1] = table.concat(names, " ")
      return data, f
    end
    local ok, r = pcall(gate.evaluate, ctx, { file = fixtures .. "/csr_int/v0.cu" }, w)
    workload.host_inputs = real
    assert(ok, r)
    if r.verdict ~= "ok" then fail("verdict %s: %s", r.verdict, tostring((r.stages.correct or {}).message)) end
    expect(r.stages.correct.sizes):equals(2)
    -- once per size and seed, the drawn one included (the worker keeps
    -- them), and never vals, x or y
    expect(#built):equals(8)
    for _, names in ipairs(built) do expect(names):equals("cols rows") end
  end)

  it("catches a kernel that drops the last nonzero of each row", function()
    local src = assert(io.open(fixtures .. "/csr_int/v0.cu")):read("a")
    src = src:gsub("k < rows%[r %+ 1%]", "k < rows[r + 1] - 1")
    local r = gate.evaluate(ctx, { source = src, file = "drop_last.cu" }, w)
    expect(r.verdict):equals("wrong")
  end)
  ctx:close(); pool:close()
end)
