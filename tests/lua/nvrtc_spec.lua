local nvrtc = require "kl.nvrtc"

describe("kl.nvrtc", function()
  it("compiles for sm_90 with a cubin and a resource report", function()
    local r = assert(nvrtc.compile([[
extern "C" __global__ void tile(float *o) {
  __shared__ float s[256];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  o[threadIdx.x] = s[255 - threadIdx.x];
}]], { arch = "sm_90" }))
    expect(#r.cubin > 0):is_true()
    expect(r.ptx):contains(".target sm_90")
    local f = r.functions.tile
    expect(f.entry):is_true()
    expect(f.smem):equals(1024)
    expect(f.barriers):equals(1)
    expect(f.registers):at_least(1)
  end)
  it("gives only PTX for compute_90", function()
    local r = assert(nvrtc.compile('extern "C" __global__ void k() {}', { arch = "compute_90" }))
    expect(r.cubin):is_nil()
    expect(r.ptx):contains(".entry k")
  end)
  it("lowers template names", function()
    local r = assert(nvrtc.compile([[
template <int N> __global__ void fill(float *o) { o[threadIdx.x] = N; }]], { names = { "fill<4>", "fill<8>" } }))
    expect(r.lowered["fill<4>"]):equals("_Z4fillILi4EEvPf")
    expect(r.functions[r.lowered["fill<8>"]].entry):is_true()
  end)
  it("returns nil, file:line:col and details on a compile error", function()
    local r, msg, d = nvrtc.compile("__global__ void k(int *o) {\n  o[0] = nope;\n}\n", { name = "x.cu" })
    expect(r):is_nil()
    expect(msg):equals('x.cu:2:10: error: identifier "nope" is undefined')
    expect(d.line):equals(2)
    expect(d.col):equals(10)
    expect(d.log):contains("1 error detected")
  end)
  it("shows spills when registers are capped", function()
    local src = [[
extern "C" __global__ void heavy(const float *a, float *o) {
  float r[64];
  #pragma unroll
  for (int i = 0; i < 64; i++) r[i] = a[threadIdx.x + i * 32];
  float acc = 0;
  #pragma unroll
  for (int j = 0; j < 64; j++) acc += r[j] * r[63 - j] + r[(j * 7) % 64];
  o[threadIdx.x] = acc;
}]]
    local r = assert(nvrtc.compile(src, { options = { "--maxrregcount=32" } }))
    expect(r.functions.heavy.registers):at_most(32)
    expect(r.functions.heavy.spill_stores + r.functions.heavy.stack):at_least(1)
  end)
  it("raises on misuse", function()
    expect(function() nvrtc.compile(42) end):raises("string expected, got number")
    expect(function() nvrtc.compile("x", { arch = "gfx90a" }) end):raises("sm_90 or compute_90")
    expect(function() nvrtc.compile("x", { options = { 1 } }) end):raises("not a string")
  end)
  it("knows its version and archs", function()
    local major = nvrtc.version()
    expect(major):at_least(12)
    expect(table.concat(nvrtc.archs(), " ")):contains("sm_90")
  end)
end)
