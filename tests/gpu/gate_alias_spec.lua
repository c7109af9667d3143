-- In-place launches on a GPU (klineage.workload.alias): the spec of
-- tests/adversarial/alias declares alias = { { "y", "x" } }, so the gate
-- runs v0, the baseline and the C reference in place too on the cuda
-- worker; the kernel that is right only out of place is rejected.
local gate = require "klineage.gate"
local workload = require "klineage.workload"
local pool_mod = require "klineage.device.worker.pool"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local dir = here .. "/../adversarial/alias"

describe("the gate on the cuda backend: kernels launched in place", function()
  local w = assert(workload.load(dir))
  local pool = assert(pool_mod.new { backend = "cuda", timeout = 120 })
  local ctx = assert(require("klineage.device.context").new { journal = false, pool = pool })

  it("passes v0 out of place and in place, the C reference in place too", function()
    local r = gate.evaluate(ctx, { file = dir .. "/v0.cu" }, w, { profile = false })
    if r.verdict ~= "ok" then fail("%s: %s", r.verdict, require("cjson").encode(r.stages)) end
    local in_place = 0
    for _, t in ipairs(r.stages.correct.trials) do if t.in_place then in_place = in_place + 1 end end
    expect(in_place > 0):is_true()
    expect(r.stages.reference.verdict):equals("ok")
  end)

  it("rejects the kernel that is wrong in place", function()
    local r = gate.evaluate(ctx, { file = dir .. "/reread.cu" }, w, { profile = false })
    expect(r.verdict):equals("wrong")
    expect(r.stages.correct.message):contains("in place (y = x)")
  end)

  it("gives it as the baseline baseline_broken against the C reference run in place", function()
    local r = gate.evaluate(ctx, { file = dir .. "/v0.cu", label = "cand" }, w,
      { baseline = { file = dir .. "/reread.cu" }, profile = false })
    expect(r.verdict):equals("baseline_broken")
    expect(r.stages.reference.at.in_place):equals("in place (y = x)")
  end)
  ctx:close(); pool:close()
end)
