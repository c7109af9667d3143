-- A kernel compiled by kl.nvrtc loads and runs through the driver loaded
-- with dlopen, and computes the right answer. Needs a GPU (label gpu).
local cuda = require "kl.cuda"
local nvrtc = require "kl.nvrtc"
local files = require "klineage.base.files"

local home = require("kl.host").home

local function floats(t) return string.pack(string.rep("<f", #t), table.unpack(t)) end
local function unfloats(s)
  local t = { string.unpack(string.rep("<f", #s // 4), s) }
  t[#t] = nil -- the next position
  return t
end

describe("kl.cuda on a GPU", function()
  assert(cuda.load())
  local dev = cuda.devices()[1]
  local arch = string.format("sm_%d%d", dev.major, dev.minor)

  it("sees a device with sensible properties", function()
    expect(dev.name):is_a("string")
    expect(dev.sms):at_least(1)
    expect(dev.memory):at_least(1 << 30)
    expect(dev.l2_bytes):at_least(1 << 20)
  end)

  it("runs saxpy compiled by NVRTC and gets the right answer", function()
    local src = assert(files.read_text(home .. "/gpu/examples/saxpy.cu"))
    local r = assert(nvrtc.compile(src, { arch = arch, name = "saxpy.cu" }))
    local ctx = cuda.context(0)
    local mod = assert(ctx:load(r.cubin))
    local fn = assert(mod:func("saxpy"))
    local n = 1000 -- not a multiple of the block size: the bounds check matters
    local x, y = {}, {}
    for i = 1, n do x[i], y[i] = i * 0.5, 1000 - i end
    local dx, dy = assert(ctx:alloc(4 * n)), assert(ctx:alloc(4 * n + 4 * 24))
    dx:upload(floats(x))
    dy:fill_u32(0x7fc00000) -- NaN everywhere, past the end too
    dy:upload(floats(y))
    assert(fn:launch { grid = (n + 255) // 256, block = 256,
      args = { { "i32", n }, { "f32", 2.0 }, dx, dy } })
    assert(ctx:synchronize())
    local out = unfloats(dy:download())
    for i = 1, n do
      if out[i] ~= 2.0 * x[i] + y[i] then fail("y[%d] = %s, want %s", i - 1, out[i], 2.0 * x[i] + y[i]) end
    end
    expect(out[n + 1] ~= out[n + 1]):is_true() -- past n stays NaN: nothing wrote it
  end)

  it("agrees with ptxas on registers and reports occupancy", function()
    local r = assert(nvrtc.compile(assert(files.read_text(home .. "/gpu/examples/saxpy.cu")), { arch = arch }))
    local ctx = cuda.context(0)
    local fn = assert(assert(ctx:load(r.cubin)):func("saxpy"))
    expect(fn:attributes().registers):equals(r.functions.saxpy.registers)
    expect(fn:occupancy(256, 0)):equals(dev.threads_per_sm // 256)
  end)

  it("times a launch with events", function()
    local ctx = cuda.context(0)
    local r = assert(nvrtc.compile('extern "C" __global__ void spin(long long c, int *o) {'
      .. ' long long t = clock64(); while (clock64() - t < c) {} o[0] = 1; }', { arch = arch }))
    local fn = assert(assert(ctx:load(r.cubin)):func("spin"))
    local o = assert(ctx:alloc(4))
    local a, b = ctx:event(), ctx:event()
    a:record()
    assert(fn:launch { grid = 1, block = 1, args = { { "i64", 2000000 }, o } })
    b:record()
    local ms = assert(a:elapsed(b))
    expect(ms):at_least(2000000 / (dev.clock_khz * 1000) * 1000 * 0.5)
  end)

  it("returns nil and the driver's message for a bad module image", function()
    local ctx = cuda.context(0)
    local m, err = ctx:load("this is not a cubin")
    expect(m):is_nil()
    expect(err):contains("cuModuleLoadData")
  end)
end)
