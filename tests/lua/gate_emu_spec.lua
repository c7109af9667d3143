-- The gate on the emu backend (no GPU): correctness only, with the same
-- poisoning and comparison as on a GPU.
local gate = require "klineage.gate"
local workload = require "klineage.workload"
local pool_mod = require "klineage.device.worker.pool"

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
  local ctx = assert(require("klineage.device.context").new { journal = false, pool = pool })
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
  local ctx = assert(require("klineage.device.context").new { journal = false, pool = pool })
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

-- A fast-math change is judged on emu with the hardware's errors
-- (gpu/emu/prelude.h): where the tolerance cannot hold them, it is wrong.
describe("gate.evaluate on emu, fast intrinsics against a tight tolerance", function()
  local pool = assert(pool_mod.new { backend = "emu", timeout = 120 })
  local ctx = assert(require("klineage.device.context").new { journal = false, pool = pool })
  local dir = fixtures .. "/fast_math_tolerance"
  local w = assert(workload.load(dir))
  local precise = assert(require("klineage.base.files").read_text(dir .. "/v0.cu"))

  it("passes the precise kernel", function()
    expect(gate.evaluate(ctx, { file = dir .. "/v0.cu" }, w).verdict):equals("ok")
  end)
  it("finds __expf wrong at e^60, where it errs by up to 72 ulp", function()
    local src, n = precise:gsub("expf%(", "__expf(")
    expect(n):equals(1)
    local r = gate.evaluate(ctx, { source = src, file = "fast_exp.cu" }, w)
    expect(r.verdict):equals("wrong")
    expect(r.stages.correct.message):matches("^e: %d+ of %d+ elements off")
  end)
  it("finds __fdividef wrong where the denominator is in (2^126, 2^128): it returns 0", function()
    local src, n = precise:gsub("q%[i%] = (%b()) / (%b());", "q[i] = __fdividef(%1, %2);")
    expect(n):equals(1)
    local r = gate.evaluate(ctx, { source = src, file = "fast_div.cu" }, w)
    expect(r.verdict):equals("wrong")
    expect(r.stages.correct.message):matches("^q: 1000 of 1000 elements off")
  end)
  ctx:close(); pool:close()
end)
