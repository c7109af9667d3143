local stats = require "klineage.device.measure.stats"
local sampler = require "klineage.device.measure.sampler"

describe("measure.stats", function()
  it("takes medians and quantiles", function()
    expect(stats.median({ 5, 1, 3 })):equals(3)
    expect(stats.median({ 4, 1, 3, 2 })):equals(2.5)
    expect(stats.quantile_sorted({ 10, 20, 30, 40, 50 }, 0.25)):equals(20)
  end)
  it("gives a bootstrap interval that holds the median and is reproducible", function()
    local xs = {}
    local draw = stats.generator(42)
    for i = 1, 200 do xs[i] = 1000 + draw(100) end
    local lo, hi = stats.bootstrap(xs, { seed = 1 })
    local lo2, hi2 = stats.bootstrap(xs, { seed = 1 })
    expect(lo):equals(lo2)
    expect(hi):equals(hi2)
    local med = stats.median(xs)
    expect(lo <= med and med <= hi):is_true()
    expect(hi - lo):at_most(40)
  end)
  it("says no difference when the intervals overlap", function()
    local a, b = {}, {}
    local draw = stats.generator(3)
    for i = 1, 60 do a[i], b[i] = 100 + draw(20), 101 + draw(20) end
    expect(stats.compare(a, b).outcome):equals("no_difference")
  end)
  it("calls a clear speedup and bounds it", function()
    local a, b = {}, {}
    local draw = stats.generator(5)
    for i = 1, 60 do a[i], b[i] = 200 + draw(10), 100 + draw(5) end
    local c = stats.compare(a, b)
    expect(c.outcome):equals("faster")
    expect(c.speedup):near(2.0, 0.15)
    expect(c.ci[1] <= c.speedup and c.speedup <= c.ci[2]):is_true()
    expect(stats.compare(b, a).outcome):equals("slower")
  end)
end)

describe("measure.sampler", function()
  local function fake_clock()
    local t = 0
    return function() t = t + 0.001; return t end
  end
  it("stops early when a quiet timer converges", function()
    local draw = stats.generator(9)
    local r = sampler.run { sample = function() return 1e6 + draw(1000) end, clock = fake_clock() }
    expect(r.converged):is_true()
    expect(r.reason):equals("converged")
    expect(r.n):at_most(20)
    expect(r.median):near(1e6 + 500, 200)
  end)
  it("keeps sampling a noisy timer until a cap and says it did not converge", function()
    local draw = stats.generator(11)
    local r = sampler.run { sample = function() return 1e6 * (0.5 + draw(1000) / 1000) end,
      clock = fake_clock(), max_samples = 60 }
    expect(r.converged):is_false()
    expect(r.reason):equals("sample cap")
    expect(r.n):equals(60)
  end)
  it("honours the time cap", function()
    local draw = stats.generator(13)
    local r = sampler.run { sample = function() return 1e6 * (0.5 + draw(1000) / 1000) end,
      clock = fake_clock(), max_seconds = 0.02 }
    expect(r.reason):equals("time cap")
  end)
  it("runs the warm-up before counting samples", function()
    local calls = 0
    local r = sampler.run { sample = function() calls = calls + 1; return 1000 end, warmup = 4, clock = fake_clock() }
    expect(calls):equals(r.n + 4)
  end)
  it("rejects a sample that is not a positive time", function()
    expect(function() sampler.run { sample = function() return 0 end, warmup = 0, clock = fake_clock() } end)
      :raises("positive number of ns")
  end)
end)
