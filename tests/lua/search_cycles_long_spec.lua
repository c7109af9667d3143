-- One gate cycle per judged candidate, on the fake worker made to stand
-- for a timed device: its profile and compare take about a minute of CPU,
-- so this runs under the label long (tests/CMakeLists.txt).
local files = require "klineage.base.files"
local workload = require "klineage.workload"
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")

describe("one gate cycle per judged candidate", function()
  it("is charged once for an evaluation and its compare, on a timed (fake) backend", function()
    local gate = require "klineage.gate"
    local pool_mod = require "klineage.device.worker.pool"
    local fixture = here .. "/../fixtures/workloads/saxpy"
    local sw = assert(workload.load(fixture))
    local v0 = assert(files.read_text(fixture .. "/v0.cu"))
    local pool = assert(pool_mod.new { backend = "fake", timeout = 30 })
    local ctx = assert(require("klineage.device.context").new { journal = false, pool = pool, budget = 10 })
    ctx.timed = true -- the fake worker times kernels in Lua; here its times stand for a device's
    local against = { source = v0, label = "v0.cu", kernel = sw.kernel, file = fixture .. "/v0.cu" }
    local N = 3
    for i = 1, N do
      local text = v0 .. "\n// candidate " .. i .. "\n"
      local r = gate.judge(ctx, { source = text, label = "c" .. i, kernel = sw.kernel, file = fixture .. "/c" .. i .. ".cu" },
        sw, { baseline = against, against = against })
      expect(r.verdict):equals("ok")
      expect(r.effect.measured):equals(true)
    end
    expect((ctx:spent())):equals(N)
    ctx:close(); pool:close()
  end)
end)
