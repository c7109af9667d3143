-- The gate's timer on a GPU: L2-flushed CUPTI samples of a 64 MiB saxpy,
-- compared with the bytes it must move, and the same kernel timed twice.
local cuda = require "kl.cuda"
local nvrtc = require "kl.nvrtc"
local files = require "klineage.base.files"
local gpu_timer = require "klineage.device.measure.gpu_timer"
local sampler = require "klineage.device.measure.sampler"
local stats = require "klineage.device.measure.stats"

local home = require("kl.host").home

describe("measure.gpu_timer", function()
  assert(cuda.load())
  local dev = cuda.devices()[1]
  local ctx = cuda.context(0)
  local r = assert(nvrtc.compile(assert(files.read_text(home .. "/gpu/examples/saxpy.cu")),
    { arch = string.format("sm_%d%d", dev.major, dev.minor) }))
  local saxpy = assert(assert(ctx:load(r.cubin)):func("saxpy"))
  local n = 16 * 1024 * 1024 -- 64 MiB per vector
  local x, y = assert(ctx:alloc(4 * n)), assert(ctx:alloc(4 * n))
  x:fill_u32(0x3f800000)
  y:fill_u32(0)
  local function run()
    return saxpy:launch { grid = (n + 255) // 256, block = 256, args = { { "i32", n }, { "f32", 1.0 }, x, y } }
  end
  local t = gpu_timer.new(ctx, dev)

  it("probes an SM clock between idle and the maximum", function()
    local mhz = assert(t:sm_clock_mhz())
    expect(mhz):at_least(100)
    expect(mhz):at_most(t.max_clock_mhz * 1.1)
  end)

  local first
  it("samples until the median is tight, inside the event window", function()
    first = sampler.run { sample = function() return assert(t:sample(run)) end, max_seconds = 3 }
    expect(first.n):at_least(10)
    for _, info in ipairs(first.infos) do
      expect(info.kernels):equals(1)
    end
    -- 192 MiB moved: at the H200's ~4.2 TB/s that is ~48 us; anything under
    -- 30 us would beat the memory system and means a broken timer.
    expect(first.median):at_least(30000)
    expect(first.median):at_most(2e6)
  end)

  it("agrees with itself when timed again", function()
    local second = sampler.run { sample = function() return assert(t:sample(run)) end, max_seconds = 3 }
    local c = stats.compare(first.samples, second.samples)
    io.write(string.format("      saxpy 64 MiB: %.2f us [%.2f, %.2f] n=%d, again %.2f us [%.2f, %.2f] n=%d: %s\n",
      first.median / 1e3, first.ci[1] / 1e3, first.ci[2] / 1e3, first.n,
      second.median / 1e3, second.ci[1] / 1e3, second.ci[2] / 1e3, second.n, c.verdict))
    expect(c.speedup):near(1.0, 0.03)
  end)
  t:close()
end)
