-- The cuda worker through the real pool and protocol: bit-identical inputs
-- with the host generator, a correct launch, CUPTI timing, metrics, and a
-- fault and a hang that cost only the worker.
local nvrtc = require "kl.nvrtc"
local randgen = require "kl.randgen"
local protocol = require "klineage.device.worker.protocol"
local pool_mod = require "klineage.device.worker.pool"

local KERNELS = [[
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void out_of_bounds(float *y) { y[(1ll << 40) + threadIdx.x] = 1.f; }
extern "C" __global__ void forever(int *flag) { while (atomicAdd(flag, 0) == 0) {} }
]]

describe("klineage worker --backend cuda", function()
  local pool = assert(pool_mod.new { backend = "cuda", timeout = 60 })
  local dev = assert(pool:device(1))
  local r = assert(nvrtc.compile(KERNELS, { arch = dev.arch }))
  local cubin = protocol.base64(r.cubin)
  local function req(t, timeout) return pool:request(1, t, timeout) end
  local function load()
    return assert(req { op = "load", module = "k", cubin_b64 = cubin, kernels = { "saxpy", "out_of_bounds", "forever" } })
  end
  local n = 1000003

  it("says hello with the device", function()
    expect(dev.arch):matches("^sm_%d+$")
    expect(dev.sm_count):at_least(1)
  end)

  it("generates inputs bit-identical to the host generator", function()
    load()
    assert(req { op = "alloc", buffers = { { name = "x", type = "f32", count = n }, { name = "y", type = "f32", count = n },
      { name = "h", type = "f16", count = 4099 }, { name = "b", type = "bf16", count = 4099 },
      { name = "i", type = "i32", count = 4099 }, { name = "d", type = "f64", count = 4099 },
      { name = "u", type = "u8", count = 4099 } } })
    local specs = { { name = "x", init = "uniform", stream = 0 }, { name = "y", init = "normal", stream = 1 },
      { name = "h", init = "normal", stream = 2 }, { name = "b", init = "uniform", stream = 3 },
      { name = "i", init = { "int", -5, 1000 }, stream = 4 }, { name = "d", init = "normal", stream = 5 },
      { name = "u", init = { "int", 0, 255 }, stream = 6 } }
    local reply = assert(req { op = "init", seed = 12345, buffers = specs })
    local types = { x = "f32", y = "f32", h = "f16", b = "bf16", i = "i32", d = "f64", u = "u8" }
    for _, s in ipairs(specs) do
      local count = (s.name == "x" or s.name == "y") and n or 4099
      local want = randgen.fill(types[s.name], count, s.init, 12345, s.stream)
      local got = assert(protocol.unbase64(assert(req { op = "read", buffer = s.name }).data_b64))
      if got ~= want then
        local at = 1
        while got:byte(at) == want:byte(at) do at = at + 1 end
        fail("buffer %s (%s %s) differs from the host generator at byte %d", s.name, types[s.name], tostring(s.init[1] or s.init), at - 1)
      end
    end
    -- The device checksum changes when one byte does, and not otherwise.
    local again = assert(req { op = "checksum", buffers = { "x" } }).checksums.x
    expect(again):equals(reply.checksums.x)
    assert(req { op = "upload", name = "u", data_b64 = protocol.base64(string.rep("\1", 4099)) })
    local u1 = assert(req { op = "checksum", buffers = { "u" } }).checksums.u
    assert(req { op = "upload", name = "u", data_b64 = protocol.base64(string.rep("\1", 4098) .. "\2") })
    expect(assert(req { op = "checksum", buffers = { "u" } }).checksums.u ~= u1):is_true()
  end)

  it("launches saxpy and matches a host computation", function()
    local x = randgen.unpack("f32", randgen.fill("f32", n, "uniform", 12345, 0))
    local y = randgen.unpack("f32", randgen.fill("f32", n, "normal", 12345, 1))
    for i = 1, n do y[i] = 2.5 * x[i] + y[i] end
    assert(req { op = "snapshot", buffers = { "y" }, as = "host" })
    assert(req { op = "upload", name = "y@host", data_b64 = protocol.base64(randgen.pack("f32", y)) })
    assert(req { op = "launch", module = "k", kernel = "saxpy", grid = { (n + 255) // 256 }, block = { 256 },
      args = { { "i32", n }, { "f32", 2.5 }, { "buf", "x" }, { "buf", "y" } } })
    local c = assert(req { op = "compare", buffer = "y", against = "y@host", rtol = 1e-6, atol = 1e-7 })
    expect(c.pass):is_true()
    expect(c.nonfinite):equals(0)
  end)

  it("times a sequence with CUPTI and reads metrics", function()
    local seq = { { op = "launch", module = "k", kernel = "saxpy", grid = { (n + 255) // 256 }, block = { 256 },
      args = { { "i32", n }, { "f32", 1.0 }, { "buf", "x" }, { "buf", "y" } } } }
    local t = assert(req { op = "time", sequence = seq, max_seconds = 2 })
    expect(t.source):equals("cupti")
    expect(t.median_ms > 0):is_true()
    expect(t.ci_ms[1] <= t.median_ms and t.median_ms <= t.ci_ms[2]):is_true()
    expect(t.median_ms):at_most(t.event_median_ms * 1.02 + 0.002)
    local m = assert(req { op = "metrics", sequence = seq, names = { "dram__bytes_read.sum", "smsp__inst_executed.sum" } })
    expect(m.values["smsp__inst_executed.sum"] > 0):is_true()
    expect(m.passes):at_least(1)
  end)

  it("turns an out-of-bounds kernel into a fault and recovers", function()
    local reply, f = req { op = "launch", module = "k", kernel = "out_of_bounds", grid = { 1 }, block = { 32 },
      args = { { "buf", "y" } } }
    expect(reply):is_nil()
    expect(f.verdict):equals("fault")
    expect(f.message):contains("CUDA_ERROR")
    load() -- a fresh worker
    expect(pool:stats(1).starts):at_least(2)
  end)

  it("kills a hanging kernel after the timeout and recovers", function()
    assert(req { op = "alloc", buffers = { { name = "flag", type = "i32", count = 1 } } })
    assert(req { op = "zero", buffer = "flag" })
    local reply, f = req({ op = "launch", module = "k", kernel = "forever", grid = { 1 }, block = { 1 },
      args = { { "buf", "flag" } } }, 3)
    expect(reply):is_nil()
    expect(f.verdict):equals("timeout")
    load()
    expect(pool:stats(1).timeouts):at_least(1)
  end)
  -- last: its alloc replaces the buffers the cases above use
  it("compares on the device exactly as kl.randgen.compare does on the host", function()
    local m = 70001
    for _, t in ipairs { "f32", "f64", "f16", "bf16", "i32", "u32", "i64", "u8" } do
      local float = t == "f32" or t == "f64" or t == "f16" or t == "bf16"
      local init = float and "normal" or { "int", 0, 200 }
      local ref = randgen.unpack(t, randgen.fill(t, m, init, 7, 0))
      local out = randgen.unpack(t, randgen.fill(t, m, init, 7, 0))
      -- near misses, a far miss, a zero reference, and (floats) NaN and Inf
      for _, i in ipairs { 5, 777, 30000, 69999 } do out[i] = out[i] + (float and out[i] * 1e-3 or 1) end
      out[40000] = float and out[40000] * 3 or out[40000] + 50
      ref[123], out[123] = 0, float and 1e-9 or 0
      if float then out[50000], ref[60000] = 0 / 0, math.huge end
      assert(req { op = "alloc", buffers = { { name = "o" .. t, type = t, count = m }, { name = "r" .. t, type = t, count = m } } })
      local ob, rb = randgen.pack(t, out), randgen.pack(t, ref)
      assert(req { op = "upload", name = "o" .. t, data_b64 = protocol.base64(ob) })
      assert(req { op = "upload", name = "r" .. t, data_b64 = protocol.base64(rb) })
      for _, tol in ipairs { { rtol = 1e-2, atol = 1e-6 }, { rtol = 0, atol = 0 } } do
        local got = assert(req { op = "compare", buffer = "o" .. t, against = "r" .. t, rtol = tol.rtol, atol = tol.atol })
        local want = randgen.compare(t, ob, rb, tol)
        for _, k in ipairs { "pass", "max_abs", "max_rel", "max_ref", "tolerance", "bad_count", "nonfinite", "count", "first_bad" } do
          -- doubles cross the pipe with 14 significant digits (protocol.lua)
          local same = got[k] == want[k] or (type(want[k]) == "number" and math.type(want[k]) == "float"
            and math.abs(got[k] - want[k]) <= 1e-13 * math.abs(want[k]))
          check(same, "%s rtol=%g: %s is %s on the device, %s on the host", t, tol.rtol, k, tostring(got[k]), tostring(want[k]))
        end
      end
    end
  end)

  pool:close()
end)
