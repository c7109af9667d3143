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
  it("shows ptxas's own error line, which NVRTC leaves out of a verbose log", function()
    local src = 'extern "C" __global__ void k(float *o) {\n  __shared__ float s[16 * 1024 * 1024];\n' ..
      '  s[threadIdx.x] = 1.0f;\n  __syncthreads();\n  o[threadIdx.x] = s[threadIdx.x ^ 1];\n}\n'
    local r, msg, d = nvrtc.compile(src, { name = "big_smem.cu" })
    expect(r):is_nil()
    expect(msg):matches("^big_smem%.cu: ptxas error%s*: Entry function 'k' uses too much shared data %(0x4000000 bytes, 0x%x+ max%)$")
    expect(d.log):matches("^ptxas error") -- the error first,
    expect(d.log):contains("67108864 bytes smem") -- and the resource report kept
  end)
  it("keeps a diagnostic on one line when the file name holds a newline or a quote", function()
    local r, msg, d = nvrtc.compile("__global__ void k(int *o) {\n  o[0] = nope;\n}\n", { name = 'dir/new\nli"ne.cu' })
    expect(r):is_nil()
    expect(msg):equals('dir/new\\nli"ne.cu:2:10: error: identifier "nope" is undefined')
    expect(d.file):equals('dir/new\\nli"ne.cu')
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

describe("kl.nvrtc.read_source", function()
  local dir = os.tmpname() .. ".d"
  assert(os.execute("mkdir -p '" .. dir .. "'"))
  local function file(name, contents)
    local h = assert(io.open(dir .. "/" .. name, "wb"))
    h:write(contents)
    h:close()
    return dir .. "/" .. name
  end

  it("reads a regular file", function()
    expect(nvrtc.read_source(file("k.cu", "__global__ void k() {}\n"))):equals("__global__ void k() {}\n")
    expect(nvrtc.read_source(file("empty.cu", ""))):equals("")
  end)
  it("says why it cannot open a path, with the stage", function()
    local t, msg, stage = nvrtc.read_source(dir .. "/missing.cu")
    expect(t):is_nil()
    expect(msg):equals("No such file or directory")
    expect(stage):equals("open")
    _, msg = nvrtc.read_source(file("plain", "x") .. "/under.cu")
    expect(msg):equals("Not a directory")
  end)
  it("refuses a directory, a FIFO and a device before reading a byte", function()
    local _, msg, stage = nvrtc.read_source(dir)
    expect(msg):equals("a directory, not a regular file")
    expect(stage):equals("type")
    -- a FIFO with no writer: opening it to read would block forever
    assert(os.execute("mkfifo '" .. dir .. "/fifo'"))
    _, msg = nvrtc.read_source(dir .. "/fifo")
    expect(msg):equals("a FIFO, not a regular file")
    -- /dev/zero never ends: reading it would fill memory
    _, msg = nvrtc.read_source("/dev/zero")
    expect(msg):equals("a character device, not a regular file")
  end)
  it("refuses a file over the limit, by its size or as it is read", function()
    local path = file("big.cu", string.rep("x", 1000))
    expect(nvrtc.read_source(path, 1000)):equals(string.rep("x", 1000))
    local t, msg, stage = nvrtc.read_source(path, 999)
    expect(t):is_nil()
    expect(msg):equals("1000 bytes, over the limit of 999")
    expect(stage):equals("size")
    -- procfs files say they are empty and are not: the read itself stops
    _, msg, stage = nvrtc.read_source("/proc/self/maps", 64)
    expect(msg):equals("more than 64 bytes, over the limit of 64")
    expect(stage):equals("size")
  end)
  it("raises on misuse", function()
    expect(function() nvrtc.read_source() end):raises("string expected")
    expect(function() nvrtc.read_source("x", -1) end):raises("max_bytes")
  end)
  os.execute("rm -rf '" .. dir .. "'")
end)
