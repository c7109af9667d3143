-- The anti-cheat bound (gate/profile.lua): the compulsory bytes at the
-- measured peak bandwidth, which no correct kernel beats; the flop count
-- is information. Driven through profile.stage with a session that
-- answers the timing with a given median, so that no GPU is needed.
local profile = require "klineage.gate.profile"
local workload = require "klineage.workload"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local spec = here .. "/../adversarial/bounds/fewer_flops"

-- A session whose kernels take median_ms and are right.
local function timed_at(median_ms)
  local s = {}
  function s.launches_at() return { { op = "launch" } }, {} end
  function s.call(_, req)
    assert(req.op == "time")
    return { median_ms = median_ms, samples_ms = { median_ms } }
  end
  function s.reference() end
  function s.run() end
  function s.check_canaries() end
  function s.compare_outputs() return {} end
  return s
end

local CEILINGS = { copy_gbps = 4000, read_gbps = 4500, fp32_tflops = 50 }

describe("the anti-cheat bound", function()
  local w = assert(workload.load(spec))
  local p = w.params
  local bytes_ms = workload.bytes(w, p) / (4500 * 1e9) * 1e3 -- 12 MiB at 4500 GB/s

  it("passes an honest kernel far under its spec's flop count", function()
    local st = profile.stage(timed_at(0.01), nil, nil, w, p, { ceilings = CEILINGS })
    expect(st.verdict):equals("ok")
    expect(st.anticheat.bound):contains("compulsory bytes")
    expect(st.anticheat.ms):near(bytes_ms, 1e-9)
    expect(st.pct_of_fp32_peak > 1000):is_true() -- information: the formula's flops could not run this fast
  end)

  it("rejects a time under the compulsory bytes at the peak bandwidth", function()
    local st = profile.stage(timed_at(0.8 * profile.ROOFLINE_MARGIN * bytes_ms), nil, nil, w, p, { ceilings = CEILINGS })
    expect(st.verdict):equals("suspicious")
    expect(st.message):contains("compulsory-bytes bound")
  end)

  it("passes a time just over the margin", function()
    local st = profile.stage(timed_at(1.01 * profile.ROOFLINE_MARGIN * bytes_ms), nil, nil, w, p, { ceilings = CEILINGS })
    expect(st.verdict):equals("ok")
  end)
end)
