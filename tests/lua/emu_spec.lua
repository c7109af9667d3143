-- kl.emu: CUDA C kernels run on the CPU, checked against CPU computations.
local emu = require "klineage.device.emu"
local kemu = require "kl.emu"

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
local kernels = here .. "/../emu/"

-- string.unpack returns the next position last: drop it.
local function unpack_n(fmt, n, s)
  local t = { string.unpack(string.rep(fmt, n), s) }
  t[#t] = nil
  return t
end
local function floats(buf, n) return unpack_n("f", n, buf:download(0, 4 * n)) end
local function ints(buf, n, fmt)
  fmt = fmt or "i4"
  return unpack_n(fmt, n, buf:download(0, n * string.packsize(fmt)))
end
local function pack_floats(t) return string.pack(string.rep("f", #t), table.unpack(t)) end
local function pack_ints(t, fmt) return string.pack(string.rep(fmt or "i4", #t), table.unpack(t)) end

local modules = {}
local function module(name)
  if not modules[name] then
    local m, err = emu.compile_file(kernels .. name .. ".cu")
    if not m then error(name .. ": " .. err.verdict .. ": " .. err.message .. "\n" .. (err.log or ""), 0) end
    modules[name] = m
  end
  return modules[name]
end

-- A pseudo-random sequence that does not depend on Lua's math.random.
local function lcg(seed)
  local s = seed
  return function()
    s = (s * 6364136223846793005 + 1442695040888963407) & 0x7FFFFFFFFFFFFFFF
    return (s >> 33) / (1 << 30) - 1.0
  end
end

describe("kl.emu buffers", function()
  it("round-trips bytes and refuses ranges outside the buffer", function()
    local b <close> = emu.alloc(10, "b")
    expect(b:size()):equals(10)
    expect(b:download()):equals(string.rep("\0", 10))
    b:upload("hello", 3)
    expect(b:download(3, 5)):equals("hello")
    expect(function() b:upload("toolong", 5) end):raises("outside buffer 'b'")
    expect(function() b:download(8, 3) end):raises("outside buffer 'b'")
  end)
  it("names the freed state", function()
    local b = emu.alloc(4, "gone")
    b:free()
    expect(function() b:size() end):raises("freed")
  end)
  it("hashes, generates and copies in place as the string functions do", function()
    local randgen, hash = require "kl.randgen", require "kl.hash"
    local a <close> = emu.alloc(4 * 1001, "a", 4)
    a:generate("f32", "normal", 7, 2)
    expect(a:download()):equals(randgen.fill("f32", 1001, "normal", 7, 2))
    expect(a:sha256()):equals(hash.sha256(a:download()))
    local i <close> = emu.alloc(8 * 5, "i", 8)
    i:generate("i64", { "int", -3, 3 }, 1, 0)
    expect(i:download()):equals(randgen.fill("i64", 5, { "int", -3, 3 }, 1, 0))
    local b <close> = emu.alloc(4 * 1001, "b", 4)
    b:copy_from(a)
    expect(b:download()):equals(a:download())
    local odd <close> = emu.alloc(6, "odd", 1)
    expect(function() odd:generate("f32", "uniform", 1, 0) end):raises("no whole number of f32 elements")
    expect(function() odd:copy_from(a) end):raises("cannot copy buffer 'a'")
    expect(function() a:generate("i32", "uniform", 1, 0) end):raises("float buffers only")
  end)
  it("gives a zeroed buffer where it reuses a freed one's pages", function()
    for _ = 1, 3 do
      local b = emu.alloc(3 * 4096 + 8, "reused", 4)
      expect(b:download()):equals(string.rep("\0", 3 * 4096 + 8))
      b:fill(0xAB)
      b:free()
    end
  end)
end)

describe("kl.emu lowering", function()
  it("turns extern __shared__ into a pointer to the block's dynamic shared memory", function()
    local l = assert(emu.lower("__global__ void k() {\n  extern __shared__ __align__(16) float s[];\n  s[0] = 1;\n}\n"))
    expect(l.text):contains("float *const s = reinterpret_cast<float *>(__kl_dyn_smem);")
    expect(l.kernels[1].name):equals("k")
    local f = assert(emu.lower("extern __align__(16) __shared__ unsigned char raw[];\n__global__ void k() { raw[0] = 1; }\n"))
    expect(f.text):contains("static thread_local unsigned char *const raw = reinterpret_cast<unsigned char *>(__kl_dyn_smem);")
  end)
  it("rewrites shared declarations of every form, and leaves strings and comments alone", function()
    local m = module("lowering")
    expect(m:signature("declarations")):equals({ "ptr", "struct", "ptr" })
    local out <close> = emu.alloc(4 * 64, "out", 4)
    local idx <close> = emu.alloc(4, "idx", 4)
    idx:upload(string.pack("i4", 5))
    local pair = string.pack("fi4", 1.5, 10)
    expect(m:launch("declarations", { grid = 1, block = 64, smem = 64 * 4, args = { out, pair, idx } })):is_true()
    -- 2*1.5 + 10 + (1+2) + 3 + 4 + 4 + 5 + 64 + 8
    expect(floats(out, 64)):equals((function() local t = {} for i = 1, 64 do t[i] = 104 end return t end)())
    expect(function() m:launch("declarations", { grid = 1, block = 1, args = { out, "short", idx } }) end)
      :raises("argument 2: 5 bytes given, the parameter has 8")
  end)
  it("passes vector structs by value", function()
    local m = module("lowering")
    expect(m:signature("by_value")):equals({ "struct", "struct", "ptr" })
    local out <close> = emu.alloc(4 * 4, "out", 4)
    expect(m:launch("by_value", { grid = 1, block = 4,
      args = { string.pack("ffff", 1, 2, 3, 4), string.pack("dd", 2.5, 4), out } })):is_true()
    expect(floats(out, 4)):equals({ 20, 20, 20, 20 })
  end)
  it("keeps line numbers through rewrites", function()
    local src = "__global__ void k(float *o) {\n  __shared__ float t[4],\n    u[4];\n  o[0] = t[0];\n  undefined_name();\n}\n"
    local m, err = emu.compile(src, { name = "lines.cu" })
    expect(m):is_nil()
    expect(err.verdict):equals("compile_error")
    expect(err.message):contains("lines.cu:5:")
  end)
  it("rejects <<< >>> in device code", function()
    local _, err = emu.lower("__global__ void c() {}\n__global__ void p() {\n  c<<<1, 1>>>();\n}\n")
    expect(err.verdict):equals("unsupported")
    expect(err.message):contains("<<< >>>")
    expect(err.line):equals(3)
  end)
  it("finds each unsupported construct, but not in comments or strings", function()
    local cases = {
      { "__global__ void k() { wmma::fragment<int> f; }", "wmma" },
      { "__global__ void k() { __pipeline_memcpy_async(0, 0, 4); }", "cp.async" },
      { "__global__ void k() { cooperative_groups::this_grid().sync(); }", "grid sync" },
      { "__global__ void k(cudaTextureObject_t t) { }", "texture" },
      { "#include <mma.h>\n__global__ void k() {}", "wmma" },
    }
    for _, c in ipairs(cases) do
      local _, err = emu.lower(c[1])
      expect(err and err.construct):contains(c[2])
    end
    expect(emu.lower("// asm(\"x\") in a comment\n__global__ void k() { const char *s = \"asm\"; }")):exists()
    expect(emu.lower('__global__ void k() { const char *s = R"x(asm(" )" <<<)x"; }')):exists()
    -- a digit separator is not a character literal that would hide what follows
    local _, err = emu.lower("__global__ void k(int *o) { o[0] = 1'000; asm(\"trap;\"); o[1] = 2'0; }")
    expect(err and err.construct):contains("asm")
  end)
  it("generates entries for every non-template kernel", function()
    local l = emu.lower([[
template <int B> __global__ void t(float *x) {}
extern "C" __global__ void __launch_bounds__(128) a(float *x) {}
static __global__ void b(int n);
static __global__ void b(int n) {}
]])
    local names = {}
    for _, k in ipairs(l.kernels) do names[#names + 1] = k.name .. (k.template and "<>" or "") end
    expect(table.concat(names, " ")):equals("t<> a b")
    expect(l.text):contains("__kl_entry_a")
    expect(l.text):never_contains("__kl_entry_t")
  end)
end)

describe("kl.emu template kernels", function()
  it("instantiates the names it is given", function()
    local src = [[
template <int SCALE, typename T> __global__ void scale(T *x) { x[threadIdx.x] *= SCALE; }
]]
    local m = assert(emu.compile(src, { names = { "scale<3, float>", "scale<5, int>" } }))
    local f <close> = emu.alloc(8, "f", 4)
    local i <close> = emu.alloc(8, "i", 4)
    f:upload(string.pack("ff", 1.5, 2))
    i:upload(string.pack("i4i4", 7, -1))
    expect(m:launch("scale<3, float>", { grid = 1, block = 2, args = { f } })):is_true()
    expect(m:launch("scale<5, int>", { grid = 1, block = 2, args = { i } })):is_true()
    expect(string.format("%g %g", string.unpack("ff", f:download()))):equals("4.5 6")
    expect(string.format("%d %d", string.unpack("i4i4", i:download()))):equals("35 -5")
    expect(m:signature("scale<5, int>")):equals({ "ptr" })
    local _, err = m:launch("scale", { grid = 1, block = 1, args = { f } })
    expect(err):contains("no kernel 'scale'")
  end)
end)

describe("kl.emu compile cache", function()
  it("compiles once, then reuses the shared object; a changed source recompiles", function()
    local dir = os.tmpname()
    os.remove(dir)
    local src = "extern \"C\" __global__ void k(int *o) { o[threadIdx.x] = threadIdx.x; }\n"
    local m1 = assert(emu.compile(src, { cache_dir = dir }))
    local m2 = assert(emu.compile(src, { cache_dir = dir }))
    local m3 = assert(emu.compile(src .. "// changed\n", { cache_dir = dir }))
    expect(m1.compiled):is_true()
    expect(m2.compiled):is_false()
    expect(m3.compiled):is_true()
    expect(m1.key):equals(m2.key)
    os.execute("rm -rf '" .. dir .. "'")
  end)
  it("precompiles the prelude once, and a .gch g++ cannot use changes nothing a kernel computes", function()
    local dir = scratch_dir()
    local function run(value)
      local src = string.format("extern \"C\" __global__ void k(float *o) { o[threadIdx.x] = %s + threadIdx.x; }\n", value)
      local m = assert(emu.compile(src, { cache_dir = dir }))
      local out <close> = emu.alloc(4 * 4, "out", 4)
      expect(m:launch("k", { grid = 1, block = 4, args = { out } })):is_true()
      return floats(out, 4)
    end
    expect(run("1.5f")):equals({ 1.5, 2.5, 3.5, 4.5 })
    local h = io.popen("ls -d '" .. dir .. "'/pch-*/prelude.h.gch")
    local gch = h:read("l")
    h:close()
    expect(gch):exists()
    write_file(gch, "not a precompiled header")
    expect(run("-2.0f")):equals({ -2, -1, 0, 1 })
    os.execute("rm -rf '" .. dir .. "'")
  end)
  it("hashes its inputs with string boundaries", function()
    expect(kemu.hash("ab", "c")):never_contains(kemu.hash("a", "bc"))
    expect(#kemu.hash("x")):equals(32)
  end)
end)

describe("kl.emu warp intrinsics", function()
  it("sums a block with shuffles and shared memory", function()
    local m = module("reduce_shfl")
    local n, block = 1000, 256
    local grid = (n + block - 1) // block
    local r, data = lcg(7), {}
    for i = 1, n do data[i] = r() end
    local input <close> = emu.alloc(4 * n, "in", 4)
    local out <close> = emu.alloc(4 * grid, "out", 4)
    input:upload(pack_floats(data))
    expect(m:launch("block_sum", { grid = grid, block = block, args = { input, out, n } })):is_true()
    local got = floats(out, grid)
    for b = 1, grid do
      local want = 0
      for i = (b - 1) * block + 1, math.min(b * block, n) do want = want + data[i] end
      expect(got[b]):near(want, 1e-4)
    end
  end)
  it("reduces a warp with __shfl_xor_sync", function()
    local m = module("reduce_shfl")
    local input <close> = emu.alloc(4 * 128, "in", 4)
    local out <close> = emu.alloc(4 * 4, "out", 4)
    local data = {}
    for i = 1, 128 do data[i] = i end
    input:upload(pack_floats(data))
    expect(m:launch("warp_sum_xor", { grid = 2, block = 64, args = { input, out } })):is_true()
    expect(floats(out, 4)):equals({ 528, 1552, 2576, 3600 })
  end)
  it("compacts with __ballot_sync and __popc", function()
    local m = module("ballot_compact")
    local n = 100
    local data, r = {}, lcg(3)
    for i = 1, n do data[i] = r() > 0 and i or -i end
    local input <close> = emu.alloc(4 * n, "in", 4)
    local out <close> = emu.alloc(4 * 128, "out", 4)
    local counts <close> = emu.alloc(4 * 4, "counts", 4)
    input:upload(pack_ints(data))
    expect(m:launch("compact", { grid = 1, block = 128, args = { input, out, counts, n } })):is_true()
    local got, cnt = ints(out, 128), ints(counts, 4)
    for w = 0, 3 do
      local kept = {}
      for i = w * 32 + 1, math.min(w * 32 + 32, n) do
        if data[i] > 0 then kept[#kept + 1] = data[i] end
      end
      expect(cnt[w + 1]):equals(#kept)
      for j = 1, #kept do expect(got[w * 32 + j]):equals(kept[j]) end
    end
  end)
  it("follows CUDA semantics lane by lane", function()
    local m = module("warp_ops")
    local out <close> = emu.alloc(4 * 32 * 13, "out", 4)
    expect(m:launch("warp_ops", { grid = 1, block = 32, args = { out } })):is_true()
    local got = ints(out, 32 * 13)
    local function row(r, l) return got[r * 32 + l + 1] end
    for l = 0, 31 do
      expect(row(0, l)):equals(30)
      expect(row(1, l)):equals(((l & ~7) + ((l + 1) & 7)) * 10)
      expect(row(2, l)):equals(l >= 2 and (l - 2) * 10 or l * 10)
      expect(row(3, l)):equals((l & 15) + 3 < 16 and (l + 3) * 10 or l * 10)
      expect(row(4, l)):equals((l ~ 5) * 10)
      expect(row(5, l)):equals(1)
      expect(row(6, l)):equals(0)
      local same = 0
      for k = 0, 31 do if k % 3 == l % 3 then same = same | (1 << k) end end
      expect(row(7, l) & 0xFFFFFFFF):equals(same)
      expect(row(8, l)):equals(496)
      expect(row(9, l)):equals(-4)
      expect(row(10, l)):equals(l < 16 and 0 or 160)
      expect(row(11, l) & 0xFFFFFFFF):equals(0xFFFFFFFF) -- every lane converged after __syncwarp
      expect(row(12, l)):equals(l < 31 and l + 1 or l)
    end
  end)
  it("returns the converged lanes from __activemask inside a branch", function()
    local m = module("warp_ops")
    local data, want = {}, { 0, 0 }
    for i = 0, 63 do
      data[i + 1] = (i % 3 == 0 or i >= 60) and 1 or 0
      if data[i + 1] == 1 then want[i // 32 + 1] = want[i // 32 + 1] | (1 << (i % 32)) end
    end
    local input <close> = emu.alloc(4 * 64, "in", 4)
    local out <close> = emu.alloc(4 * 64, "out", 4)
    input:upload(pack_ints(data))
    for _, order in ipairs({ "forward", "reverse", "shuffle" }) do
      expect(m:launch("active_lanes", { grid = 1, block = 64, order = order, seed = 4, args = { input, out } })):is_true()
      local got = ints(out, 64, "I4")
      for i = 0, 63 do expect(got[i + 1]):equals(data[i + 1] == 1 and want[i // 32 + 1] or 0) end
    end
  end)
  it("computes bit intrinsics", function()
    local m = module("warp_ops")
    local xs = { 0, 1, 0x80000000, 0xF0F0, 0x12345678, 0xFFFFFFFF, 6, 0x00010000 }
    local input <close> = emu.alloc(4 * #xs, "in", 4)
    local out <close> = emu.alloc(4 * 6 * #xs, "out", 4)
    input:upload(pack_ints(xs, "I4"))
    expect(m:launch("bits", { grid = 1, block = #xs, args = { input, out } })):is_true()
    local got = ints(out, 6 * #xs)
    for i, x in ipairs(xs) do
      local o = (i - 1) * 6
      local pop, clz, ffs, rev = 0, 32, 0, 0
      for b = 0, 31 do
        if x >> b & 1 == 1 then
          pop = pop + 1
          clz = 31 - b
          if ffs == 0 then ffs = b + 1 end
          rev = rev | (1 << (31 - b))
        end
      end
      expect(got[o + 1]):equals(pop)
      expect(got[o + 2]):equals(clz)
      expect(got[o + 3]):equals(ffs)
      expect(got[o + 4] & 0xFFFFFFFF):equals(rev)
      -- selector 0x0123: bytes 3, 2, 1, 0 of x, from low to high
      local b = function(k) return x >> (8 * k) & 0xFF end
      expect(got[o + 5] & 0xFFFFFFFF):equals(b(3) | b(2) << 8 | b(1) << 16 | b(0) << 24)
      expect(got[o + 6] & 0xFFFFFFFF):equals(x)
    end
  end)
end)

describe("kl.emu cooperative groups", function()
  it("runs block and warp-tile groups", function()
    local m = module("coop")
    local n = 96
    local data = {}
    for i = 1, n do data[i] = (i * 7) % 23 end
    local input <close> = emu.alloc(4 * n, "in", 4)
    local out <close> = emu.alloc(4 * (1 + n // 8 + n), "out", 4)
    input:upload(pack_ints(data))
    expect(m:launch("coop_sum", { grid = 1, block = n, args = { input, out } })):is_true()
    local got = ints(out, 1 + n // 8 + n)
    local total = 0
    for i = 1, n do total = total + data[i] end
    expect(got[1]):equals(total)
    for t = 0, n // 8 - 1 do
      local s, bits = 0, 0
      for j = 1, 8 do
        s = s + data[t * 8 + j]
        if data[t * 8 + j] % 2 == 1 then bits = bits | (1 << (j - 1)) end
      end
      expect(got[2 + t]):equals(s)
      for j = 1, 8 do expect(got[1 + n // 8 + t * 8 + j]):equals(bits) end
    end
  end)
  it("refuses grid-wide sync", function()
    local _, err = emu.lower("#include <cooperative_groups.h>\n__global__ void k() {\n  cooperative_groups::grid_group g = cooperative_groups::this_grid();\n  g.sync();\n}\n")
    expect(err.verdict):equals("unsupported")
    expect(err.construct):contains("grid sync")
    expect(err.line):equals(3)
  end)
end)

describe("kl.emu prelude", function()
  it("provides vector types, fast math, integer intrinsics, atomics, clocks and fences", function()
    local m = module("misc")
    local v <close> = emu.alloc(32, "v", 16)
    local f <close> = emu.alloc(4 * 9, "f", 4)
    local i <close> = emu.alloc(4 * 43, "i", 4)
    local u <close> = emu.alloc(4 * 9, "u", 4)
    v:upload(string.pack("ffffffff", 0, 0, 0, 0, 1.5, 2.5, 3.5, 4.5))
    u:upload(string.pack("I4I4I4I4I4I4I4I4I4", 0, 0, 0, 0, 0xFFFFFFFF, 0, 5, 0, 0))
    expect(m:launch("misc", { grid = 1, block = 32, args = { v, f, i, u } })):is_true()
    local fs = { string.unpack(string.rep("f", 9), f:download()) }
    expect(fs[1]):equals(4.5 + 15)
    expect(fs[2]):near(math.exp(1), 1e-6)
    expect(fs[3]):near(0.125, 2 * 2 ^ -26) -- __fdividef and rsqrtf: 2 ulp (the fast intrinsics' block below)
    expect(fs[4]):near(0.25, 2 * 2 ^ -25)
    expect(fs[5]):equals(1.25)
    expect(fs[6]):equals(7)
    expect(fs[7]):near(10 * math.log(2), 1e-5)
    expect(fs[8]):near(1, 2 ^ -21.19) -- __sinf(0) is 0, __cosf(0) within 2^-21.19 of 1
    expect(fs[9]):equals(9)
    local is = { string.unpack(string.rep("i4", 43), i:download()) }
    expect(is[39]):equals(1000 - 245)
    expect(is[40]):equals(2147483647)
    expect(is[41]):equals(-2147483648)
    expect(is[42]):equals(0)
    expect(is[43]):equals(20 - 2)
    expect(is[1]):equals(17)
    expect(is[2]):equals(-3000)
    expect(is[3]):equals(1)
    expect(is[4]):equals(1)
    expect(is[5] & 0xFFFFFFFF):equals(0xFFFFFFFF)
    expect(is[6]):equals(1)
    for t = 0, 31 do expect(is[7 + t]):equals(69) end
    local us = { string.unpack(string.rep("I4", 9), u:download()) }
    expect(us[9]):equals(10 + 5 + 3 + 2)
    expect(us[1]):equals(0x00000038)
    expect(us[2]):equals(0x38000000)
    expect(us[3]):equals(0xF)
    expect(us[4]):equals(107)
    expect(us[5]):equals(0)
    expect(us[6]):equals(0)
    expect(us[7]):equals(1000 - 26)
    expect(us[8]):equals(0x1FF)
  end)
end)

describe("kl.emu barriers", function()
  it("reduces predicates in __syncthreads_count/_and/_or", function()
    local m = module("barriers")
    local input <close> = emu.alloc(4 * 64, "in", 4)
    local out <close> = emu.alloc(4 * 3, "out", 4)
    local data = {}
    for i = 1, 64 do data[i] = i % 3 == 0 and 1 or 0 end
    input:upload(pack_ints(data))
    expect(m:launch("vote_block", { grid = 1, block = 64, args = { input, out } })):is_true()
    expect(ints(out, 3)):equals({ 21, 0, 1 })
  end)
  it("reports a __syncthreads that returned threads never reach", function()
    local m = module("barriers")
    local data <close> = emu.alloc(4 * 64, "data", 4)
    local ok, v = m:launch("early_exit", { grid = 1, block = 64, args = { data } })
    expect(ok):is_nil()
    expect(v.verdict):equals("fault")
    expect(v.kind):equals("divergent barrier")
    expect(v.message):contains("__syncthreads")
    expect(v.message):contains("reached by threads 0-15 but never by threads 16-63")
    expect(v.message):contains("barriers.cu:18 in block (0,0,0)")
    expect(v.thread.x):equals(16)
  end)
  it("reports a warp exchange that part of the warp skips", function()
    local m = module("barriers")
    local data <close> = emu.alloc(4 * 32, "data", 4)
    local ok, v = m:launch("half_warp_shuffle", { grid = 1, block = 32, args = { data } })
    expect(ok):is_nil()
    expect(v.verdict):equals("fault")
    expect(v.kind):equals("divergent barrier")
    expect(v.message):contains("__shfl_xor_sync")
    expect(v.message):contains("lanes 0-15 but not by lanes 16-31")
    expect(v.message):contains("__shfl_xor_sync at ")
    expect(v.message):contains("barriers.cu:25")
  end)
  it("reports the barriers of different branches, with their lines", function()
    local m = module("barriers")
    local data <close> = emu.alloc(4 * 8, "data", 4)
    local ok, v = m:launch("branch_barriers", { grid = 1, block = 8, args = { data } })
    expect(ok):is_nil()
    expect(v.verdict):equals("fault")
    expect(v.kind):equals("divergent barrier")
    expect(v.message):matches("threads 0, 2, 4, 6 at [^;]*barriers%.cu:34; threads 1, 3, 5, 7 at [^;]*barriers%.cu:37")
  end)
end)

describe("kl.emu atomics", function()
  it("counts exactly from blocks on several host threads", function()
    local m = module("atomics")
    local n, nbins = 20000, 17
    local data, r, want = {}, lcg(11), {}
    for b = 1, nbins do want[b] = 0 end
    for i = 1, n do
      data[i] = math.floor((r() + 1) * 500)
      want[data[i] % nbins + 1] = want[data[i] % nbins + 1] + 1
    end
    local input <close> = emu.alloc(4 * n, "in", 4)
    local bins <close> = emu.alloc(4 * nbins, "bins", 4)
    input:upload(pack_ints(data))
    expect(m:launch("histogram", { grid = 40, block = 128, threads = 2, args = { input, n, bins, nbins } })):is_true()
    expect(ints(bins, nbins, "I4")):equals(want)
  end)
  it("implements min, max, inc, CAS, sub, or, exch and float/64-bit add", function()
    local m = module("atomics")
    local n = 3000
    local data, r = {}, lcg(5)
    local mx, mn, bits, sum = -1, 1 << 30, 0, 0
    for i = 1, n do
      data[i] = math.floor((r() + 1) * 100000)
      mx, mn = math.max(mx, data[i]), math.min(mn, data[i])
      bits = bits | (1 << (data[i] & 15))
      sum = sum + data[i]
    end
    local input <close> = emu.alloc(4 * n, "in", 4)
    local stats <close> = emu.alloc(4 * 7, "stats", 4)
    local inc <close> = emu.alloc(4, "inc", 4)
    local flag <close> = emu.alloc(4, "flag", 4)
    local fsum <close> = emu.alloc(4, "fsum", 4)
    local wide <close> = emu.alloc(8, "wide", 8)
    input:upload(pack_ints(data))
    stats:upload(pack_ints({ -1, 1 << 30, 0, 0, 1000000, 0, 0 }))
    expect(m:launch("misc", { grid = 12, block = 256, threads = 2,
      args = { input, n, stats, inc, flag, fsum, wide } })):is_true()
    local s = ints(stats, 7)
    expect(s[1]):equals(mx)
    expect(s[2]):equals(mn)
    expect(s[4]):equals(1)
    expect(s[5]):equals(1000000 - n)
    expect(s[6]):equals(bits)
    expect(s[7]):equals(7)
    expect(ints(inc, 1, "I4")[1]):equals(n % 1000)
    expect(floats(fsum, 1)[1]):equals(n * 0.5)
    expect(string.unpack("I8", wide:download())):equals(sum)
  end)
end)

describe("kl.emu half and bfloat16", function()
  it("converts bit-exactly with round to nearest even", function()
    local m = module("lowp")
    local xs = { 1.0, 65504.0, 65520.0, 1e-8, 5.9604644775390625e-08, 0.1, -2.5, 0 / 0, 3.14159265, 1 / 0,
      2.98023223876953125e-08, 8.940696716308594e-08 }
    local want_h = { 0x3C00, 0x7BFF, 0x7C00, 0x0000, 0x0001, 0x2E66, 0xC100, 0x7FFF, 0x4248, 0x7C00, 0x0000, 0x0002 }
    local want_b = { 0x3F80, 0x4780, 0x4780, 0x322C, 0x3380, 0x3DCD, 0xC020, nil, 0x4049, 0x7F80, 0x3300, 0x33C0 }
    local n = #xs
    local input <close> = emu.alloc(4 * n, "in", 4)
    local h <close> = emu.alloc(2 * n, "h", 2)
    local b <close> = emu.alloc(2 * n, "b", 2)
    local back <close> = emu.alloc(4 * n, "back", 4)
    input:upload(pack_floats(xs))
    expect(m:launch("to_half", { grid = 1, block = n, args = { input, h, b, back } })):is_true()
    local gh, gb = ints(h, n, "I2"), ints(b, n, "I2")
    for i = 1, n do
      expect(string.format("%g -> 0x%04X", xs[i], gh[i])):equals(string.format("%g -> 0x%04X", xs[i], want_h[i]))
      if want_b[i] then
        expect(string.format("%g -> 0x%04X", xs[i], gb[i])):equals(string.format("%g -> 0x%04X", xs[i], want_b[i]))
      end
    end
    expect(floats(back, 1)[1]):equals(2.0)
    local out <close> = emu.alloc(8, "out", 4)
    expect(m:launch("lowp_scalars", { grid = 1, block = 1, args = { 0.1, 3.14159265, out } })):is_true()
    expect(floats(out, 2)):equals({ 0.0999755859375, 3.140625 })
    expect(floats(back, 7)[7]):equals(-1.5)
  end)
end)

describe("kl.emu faults", function()
  it("names the buffer, the index and the thread of an out-of-bounds write", function()
    local m = module("faults")
    local n = 1000
    local out <close> = emu.alloc(4 * n, "out", 4)
    local input <close> = emu.alloc(4 * (n + 64), "in", 4)
    local ok, v = m:launch("scale_off_by_one", { grid = 8, block = 128, args = { out, input, n } })
    expect(ok):is_nil()
    expect(v.verdict):equals("fault")
    expect(v.message):contains("out-of-bounds write: buffer 'out' element index 1000")
    expect(v.message):contains("thread (104,0,0) of block (7,0,0)")
    expect(v.thread.x):equals(104)
    expect(v.block.x):equals(7)
  end)
  it("tells the off-by-one variant apart from the correct kernel", function()
    local m = module("faults")
    local n = 1000
    local out <close> = emu.alloc(4 * n, "out", 4)
    local input <close> = emu.alloc(4 * (n + 64), "in", 4)
    expect(m:launch("scale", { grid = 8, block = 128, args = { out, input, n } })):is_true()
  end)
  it("catches a write below the start of a buffer", function()
    local m = module("faults")
    local out <close> = emu.alloc(4 * 32, "low", 4)
    local ok, v = m:launch("underflow", { grid = 1, block = 32, args = { out } })
    expect(ok):is_nil()
    expect(v.message):contains("buffer 'low' element index -")
  end)
  it("turns a failed assert and an integer division by zero into faults", function()
    local m = module("faults")
    local input <close> = emu.alloc(4 * 8, "in", 4)
    local out <close> = emu.alloc(4 * 8, "o", 4)
    input:upload(pack_ints({ 1, 2, 3, -4, 5, 6, 0, 8 }))
    local _, v = m:launch("checks", { grid = 1, block = 8, args = { input } })
    expect(v.verdict):equals("fault")
    expect(v.message):contains("assertion 'in[threadIdx.x] >= 0' failed")
    expect(v.message):contains("thread (3,0,0)")
    local _, d = m:launch("divide", { grid = 1, block = 8, args = { input, out } })
    expect(d.verdict):equals("fault")
    expect(d.message):contains("integer division by zero")
    expect(d.message):contains("thread (6,0,0)")
    local _, a = m:launch("aborts", { grid = 1, block = 8, args = { out } })
    expect(a.verdict):equals("fault")
    expect(a.message):contains("abort() called")
    -- the engine is still here, and the module still runs
    expect(m:launch("scale", { grid = 1, block = 8, args = { out, input, 8 } })):is_true()
  end)
  it("reports a stack overflow instead of corrupting a neighbour", function()
    local m = module("faults")
    local out <close> = emu.alloc(4 * 4, "o", 4)
    local ok, v = m:launch("big_stack", { grid = 1, block = 4, args = { out, 100000 } })
    expect(ok):is_nil()
    expect(v.verdict):equals("fault")
    expect(v.message):contains("stack overflow")
  end)
  it("interrupts a kernel that hangs, when given a timeout", function()
    local m = module("faults")
    local flag <close> = emu.alloc(4, "flag", 4)
    local t0 = require("kl.host").clock()
    local ok, v = m:launch("spin", { grid = 4, block = 64, timeout = 0.2, args = { flag } })
    expect(ok):is_nil()
    expect(v.verdict):equals("timeout")
    expect(v.message):contains("longer than 0.2 s")
    expect(require("kl.host").clock() - t0):at_most(5)
    flag:upload(string.pack("i4", 1))
    expect(m:launch("spin", { grid = 4, block = 64, timeout = 5, args = { flag } })):is_true()
  end)
  it("gives `unsupported` for inline PTX, with its line", function()
    local m, v = emu.compile_file(kernels .. "unsupported.cu")
    expect(m):is_nil()
    expect(v.verdict):equals("unsupported")
    expect(v.construct):contains("asm")
    expect(v.line):equals(5)
  end)
  it("refuses launch configurations the GPU refuses", function()
    local m = module("faults")
    local out <close> = emu.alloc(4, "o", 4)
    local _, v = m:launch("hello", { grid = 1, block = 2048, args = { 1 } })
    expect(v.verdict):equals("launch_error")
    local _, w = m:launch("hello", { grid = 1, block = 32, smem = 300000, args = { 1 } })
    expect(w.message):contains("dynamic shared memory")
    expect(function() m:launch("scale", { grid = 1, block = 1, args = { out } }) end):raises("takes 3 arguments")
    -- geometry decoded from JSON arrives as floats with integer values
    expect(m:launch("scale", { grid = 1.0, block = { 8.0, 1.0 }, args = { out, out, 1.0 } })):is_true()
    expect(function() m:launch("scale", { grid = 1.5, block = 1, args = { out, out, 1 } }) end):raises("number has no integer representation")
    expect(function() m:launch("scale", { grid = 1, block = 1, args = { 1, out, 1 } }) end):raises("pointer")
  end)
  it("prefixes printf with the thread coordinates", function()
    local m = module("faults")
    local ok, info = m:launch("hello", { grid = 2, block = 4, capture = true, args = { 42 } })
    expect(ok):is_true()
    expect(info.output):equals("[block (1,0,0) thread (2,0,0)] hello 42 1.5\n")
  end)
end)

describe("kl.emu shared-memory tiles", function()
  local M, N, K = 48, 32, 64
  local function sgemm_case(kernel, opts)
    local m = module("tiles")
    local r = lcg(21)
    local a, b = {}, {}
    for i = 1, M * K do a[i] = r() end
    for i = 1, K * N do b[i] = r() end
    local A <close> = emu.alloc(4 * M * K, "A", 4)
    local B <close> = emu.alloc(4 * K * N, "B", 4)
    local C <close> = emu.alloc(4 * M * N, "C", 4)
    A:upload(pack_floats(a))
    B:upload(pack_floats(b))
    local cfg = { grid = { N // 16, M // 16 }, block = { 16, 16 }, args = { M, N, K, A, B, C } }
    for k, v in pairs(opts or {}) do cfg[k] = v end
    assert(m:launch(kernel, cfg))
    local c, worst = floats(C, M * N), 0
    for i = 0, M - 1 do
      for j = 0, N - 1 do
        local want = 0
        for k = 0, K - 1 do want = want + a[i * K + k + 1] * b[k * N + j + 1] end
        local err = math.abs(c[i * N + j + 1] - want)
        if err ~= err then err = math.huge end
        worst = math.max(worst, err)
      end
    end
    return worst
  end
  it("computes a tiled sgemm", function()
    expect(sgemm_case("sgemm_tiled")):at_most(1e-4)
    expect(sgemm_case("sgemm_tiled", { order = "shuffle", seed = 3 })):at_most(1e-4)
  end)
  it("tells the off-by-one and the missing-barrier variants apart", function()
    expect(sgemm_case("sgemm_tiled_off_by_one")):at_least(1e-2)
    expect(sgemm_case("sgemm_tiled_no_sync")):at_least(1e-2)
  end)

  local function stencil_case(kernel, order, seed)
    local m = module("tiles")
    local n = 512
    local data, r = {}, lcg(9)
    for i = 1, n do data[i] = r() end
    local input <close> = emu.alloc(4 * n, "in", 4)
    local out <close> = emu.alloc(4 * n, "out", 4)
    input:upload(pack_floats(data))
    assert(m:launch(kernel, { grid = 2, block = 256, order = order, seed = seed, args = { input, out, n } }))
    local got, wrong = floats(out, n), 0
    for i = 1, n do
      local want = (data[i - 1] or 0) + data[i]
      if kernel == "stencil" then want = want + (data[i + 1] or 0) end
      if not (math.abs(got[i] - want) <= 1e-5) then wrong = wrong + 1 end
    end
    return wrong
  end
  it("runs a correct shared-memory tile right in every order", function()
    for _, order in ipairs({ "forward", "reverse", "shuffle" }) do
      expect(stencil_case("stencil", order, 1)):equals(0)
      expect(stencil_case("stencil_left", order, 2)):equals(0)
    end
  end)
  it("exposes a missing __syncthreads that forward order hides", function()
    expect(stencil_case("stencil_left_no_sync", "forward")):equals(0)
    expect(stencil_case("stencil_left_no_sync", "reverse")):at_least(500)
    for seed = 1, 3 do expect(stencil_case("stencil_left_no_sync", "shuffle", seed)):at_least(100) end
  end)
  it("aliases dynamic shared memory", function()
    local m = module("tiles")
    local n = 256
    local data = {}
    for i = 1, n do data[i] = i end
    local input <close> = emu.alloc(4 * n, "in", 4)
    local out <close> = emu.alloc(4 * n, "out", 4)
    input:upload(pack_floats(data))
    assert(m:launch("reverse_dyn", { grid = 4, block = 64, smem = 64 * 4, args = { input, out } }))
    local got = floats(out, n)
    expect(got[1]):equals(64)
    expect(got[64]):equals(1)
    expect(got[65]):equals(128)
  end)
end)

describe("kl.emu fibers", function()
  it("measures switch rates of the assembly switch and of swapcontext", function()
    local asm = kemu.fiber_benchmark(64, 2000, "asm")
    local uc = kemu.fiber_benchmark(64, 2000, "ucontext")
    expect(asm):at_least(1e6)
    expect(uc):at_least(1e4)
  end)
end)

describe("kl.emu worker backend", function()
  local worker = require "klineage.device.emu_worker"
  local randgen = require "kl.randgen"
  local hash = require "kl.hash"
  local saxpy = [[
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void saxpy_skip_last(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n - 1) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void saxpy_overrun(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = a * x[i] + y[i];
}
]]
  local function launch(kernel, n)
    return { op = "launch", module = "m", kernel = kernel, grid = { (n + 127) // 128, 1, 1 }, block = { 128, 1, 1 },
             smem = 0, args = { { "i32", n }, { "f32", 2.0 }, { "buf", "x" }, { "buf", "y" } } }
  end
  it("speaks the protocol: load, alloc, init, launch, snapshot, compare", function()
    local w = worker.new()
    expect(w:hello().backend):equals("emu")
    local loaded = assert(w:load { module = "m", source = saxpy, kernels = { "saxpy" } })
    expect(loaded.functions.saxpy.params):equals({ "i32", "f32", "ptr", "ptr" })
    local n = 1000
    w:alloc { buffers = { { name = "x", type = "f32", count = n }, { name = "y", type = "f32", count = n } } }
    local init = { op = "init", seed = 42, buffers = { { name = "x", init = "uniform", stream = 0 },
                                                      { name = "y", init = "uniform", stream = 1 } } }
    local sums = w:init(init).checksums
    -- the host generator's bytes, so the cuda backend's device generator agrees
    expect(sums.x):equals(hash.sha256(randgen.fill("f32", n, "uniform", 42, 0)))
    expect(assert(w:launch(launch("saxpy", n))).source):equals("host")
    w:snapshot { buffers = { "y" }, as = "ref" }
    w:init(init)
    expect(w:launch(launch("saxpy", n))):exists()
    expect(w:compare({ buffer = "y", against = "y@ref", rtol = 0, atol = 0 }).pass):is_true()
    w:init(init)
    w:launch(launch("saxpy_skip_last", n))
    local c = w:compare({ buffer = "y", against = "y@ref", rtol = 1e-5, atol = 0 })
    expect(c.pass):is_false()
    expect(c.first_bad):equals(n)
    local ref = require("klineage.device.worker.protocol").unbase64(w:read({ buffer = "y@ref" }).data_b64)
    expect(w:read({ buffer = "y", index = 0 }).value):equals(randgen.get("f32", ref, 1))
  end)
  it("keeps a bounded set of modules loaded: the least recently used is unmapped", function()
    local w = worker.new({ resident = 3 })
    local paths = {}
    for i = 1, 5 do
      local src = string.format('extern "C" __global__ void k%d(float *y) { y[0] = %d; }\n', i, i)
      assert(w:load { module = "probe" .. i, source = src, kernels = { "k" .. i } })
      paths[i] = w.modules:get("probe" .. i).path
    end
    local mapped = {}
    for line in io.lines("/proc/self/maps") do
      local path = line:match("(/%S+%.so)$")
      if path then mapped[path] = true end
    end
    expect(w.modules:count()):equals(3)
    expect(w.modules:get("probe1")):is_nil()
    expect(mapped[paths[1]]):is_nil()
    expect(mapped[paths[2]]):is_nil()
    expect(mapped[paths[5]]):is_true()
    w:bye {}
  end)
  it("answers unsupported for timing and for constructs it cannot run, fault for a bad access", function()
    local w = worker.new()
    local _, f = w:time {}
    expect(f.verdict):equals("unsupported")
    expect(f.message):equals("no timing on emu")
    local _, f2 = w:load { module = "a", source = "__global__ void k() { asm(\"trap;\"); }", kernels = { "k" } }
    expect(f2.verdict):equals("unsupported")
    expect(f2.message):contains("inline PTX")
    assert(w:load { module = "m", source = saxpy, kernels = { "saxpy_overrun" } })
    w:alloc { buffers = { { name = "x", type = "f32", count = 1000 }, { name = "y", type = "f32", count = 1000 } } }
    local _, f3 = w:launch(launch("saxpy_overrun", 1000))
    expect(f3.verdict):equals("fault")
    expect(f3.message):contains("buffer 'x' element index 1000")
  end)
  it("serves JSON lines through the worker command's loop", function()
    local protocol = require "klineage.device.worker.protocol"
    local serve = require("klineage.cli.commands.worker").serve
    local requests = {
      { id = 1, op = "hello", protocol = 1 },
      { id = 2, op = "load", module = "m", source = saxpy, kernels = { "saxpy" } },
      { id = 3, op = "alloc", buffers = { { name = "x", type = "f32", count = 300 }, { name = "y", type = "f32", count = 300 } } },
      { id = 4, op = "init", seed = 7, buffers = { { name = "x", init = "uniform" }, { name = "y", init = "zeros" } } },
      launch("saxpy", 300),
      { id = 6, op = "read", buffer = "y", index = 299 },
      { id = 7, op = "time", sequence = {} },
      { id = 8, op = "bye" },
    }
    requests[5].id = 5
    local lines = {}
    for i, r in ipairs(requests) do lines[i] = protocol.encode(r) end
    local input = assert(io.open(scratch_file(table.concat(lines, "\n") .. "\n"), "r"))
    local out = {}
    local output = { write = function(self, ...) for _, v in ipairs({ ... }) do out[#out + 1] = v end return self end,
                     flush = function() end }
    local code = serve(worker, worker.new(), input, output, "emu")
    input:close()
    expect(code):equals(0)
    local replies = {}
    for line in table.concat(out):gmatch("[^\n]+") do replies[#replies + 1] = assert(protocol.decode(line)) end
    expect(#replies):equals(8)
    expect(replies[1].backend):equals("emu")
    for i = 2, 6 do expect(replies[i].ok):is_true() end
    local x299 = randgen.get("f32", randgen.fill("f32", 300, "uniform", 7, 0), 300)
    expect(replies[6].value):near(2.0 * x299, 1e-9) -- JSON carries 14 digits
    expect(replies[7].ok):is_false()
    expect(replies[7].verdict):equals("unsupported")
    expect(replies[7].error):equals("no timing on emu")
  end)
end)

-- The fast intrinsics carry errors of the hardware's size (CUDA C
-- Programming Guide, intrinsic accuracy table; rsqrtf: 2 ulp), so that a
-- fast-math change the tolerance cannot hold fails on emu as on a GPU.
describe("kl.emu fast intrinsics", function()
  local OUTS, N = 13, 512
  local function ulp_at(e)
    local a = math.abs(e)
    if a < 2 ^ -126 then return 2 ^ -149 end
    local _, ex = math.frexp(a) -- a = m * 2^ex, m in [0.5, 1)
    return 2 ^ (ex - 1 - 23)
  end
  local function ulps(r, e) return math.abs(r - e) / ulp_at(e) end
  local function f32(v) return (string.unpack("f", string.pack("f", v))) end

  -- a in [-10, 10], b = 2^[-7, 7]: both sides of [0.5, 2] and of [-pi, pi]
  local xs, ys = {}, {}
  local r = lcg(34)
  for i = 1, N do xs[i] = f32(10 * r()) ys[i] = f32(2 ^ (7 * r())) end

  local function run()
    local m = module("fast_math")
    local x <close> = emu.alloc(4 * N, "x", 4)
    local y <close> = emu.alloc(4 * N, "y", 4)
    local out <close> = emu.alloc(4 * N * OUTS, "out", 4)
    x:upload(pack_floats(xs))
    y:upload(pack_floats(ys))
    expect(m:launch("sweep", { grid = N // 128, block = 128, args = { N, x, y, out } })):is_true()
    return out:download()
  end
  local bytes = run()
  local out = {}
  for i = 0, N - 1 do out[i + 1] = unpack_n("f", OUTS, bytes:sub(1 + 4 * OUTS * i, 4 * OUTS * (i + 1))) end

  -- Each intrinsic: its error never past the bound, and not zero: most
  -- inputs err, and in both directions.
  local function check(name, slot, exact, bound, measure)
    it(name .. " errs up to its bound, both ways, never past it", function()
      local checked, erred, up, down, worst = 0, 0, 0, 0, 0
      for i = 1, N do
        local a, b = xs[i], ys[i]
        local e = exact(a, b)
        local got = out[i][slot]
        local b_i = bound(a, b, e)
        if b_i then
          checked = checked + 1
          local err = measure == "ulp" and ulps(got, e) or math.abs(got - e)
          if err > b_i * (1 + 1e-9) then
            error(string.format("%s(%.9g, %.9g) = %.9g, exact %.17g: error %.4g over the bound %.4g", name, a, b, got, e, err, b_i), 0)
          end
          worst = math.max(worst, err / b_i)
          if got ~= f32(e) then erred = erred + 1 end
          if got > e then up = up + 1 elseif got < e then down = down + 1 end
        end
      end
      expect(checked):at_least(N // 16)
      expect(erred):at_least(checked // 2)
      expect(up):at_least(checked // 8)
      expect(down):at_least(checked // 8)
      expect(worst):at_least(0.5) -- the worst case's size, not a token error
    end)
  end
  local ln2 = math.log(2)
  check("__expf", 1, function(a) return math.exp(a) end,
    function(a) return 2 + math.floor(math.abs(1.173 * a)) end, "ulp")
  check("__exp10f", 2, function(a) return 10 ^ a end,
    function(a) return 2 + math.floor(math.abs(2.97 * a)) end, "ulp")
  local function near_one(b) return b >= 0.5 and b <= 2 end
  check("__logf [0.5, 2]", 3, function(_, b) return math.log(b) end,
    function(_, b) return near_one(b) and 2 ^ -21.41 or nil end, "abs")
  check("__logf elsewhere", 3, function(_, b) return math.log(b) end,
    function(_, b) return not near_one(b) and 3 or nil end, "ulp")
  check("__log2f [0.5, 2]", 4, function(_, b) return math.log(b, 2) end,
    function(_, b) return near_one(b) and 2 ^ -22 or nil end, "abs")
  check("__log2f elsewhere", 4, function(_, b) return math.log(b, 2) end,
    function(_, b) return not near_one(b) and 2 or nil end, "ulp")
  check("__log10f [0.5, 2]", 5, function(_, b) return math.log(b, 10) end,
    function(_, b) return near_one(b) and 2 ^ -24 or nil end, "abs")
  check("__log10f elsewhere", 5, function(_, b) return math.log(b, 10) end,
    function(_, b) return not near_one(b) and 3 or nil end, "ulp")
  check("__sinf [-pi, pi]", 6, function(a) return math.sin(a) end,
    function(a) return math.abs(a) <= math.pi and 2 ^ -21.41 or nil end, "abs")
  check("__cosf [-pi, pi]", 7, function(a) return math.cos(a) end,
    function(a) return math.abs(a) <= math.pi and 2 ^ -21.19 or nil end, "abs")
  -- outside [-pi, pi]: the single-precision reduction adds up to |x| 2^-23,
  -- and 1/(2 pi) as a float is 6.3e-9 off (2 pi 6.3e-9 = 4e-8 per unit of x)
  check("__sinf outside", 6, function(a) return math.sin(a) end,
    function(a) return math.abs(a) > math.pi and 2 ^ -21.41 + math.abs(a) * (2 ^ -23 + 5e-8) or nil end, "abs")
  check("__cosf outside", 7, function(a) return math.cos(a) end,
    function(a) return math.abs(a) > math.pi and 2 ^ -21.19 + math.abs(a) * (2 ^ -23 + 5e-8) or nil end, "abs")
  -- __sinf(x) * (1 / __cosf(x)), where cos is away from 0
  check("__tanf", 8, function(a) return math.tan(a) end, function(a, _, e)
    if math.abs(a) > 1 then return nil end
    return (2 ^ -21.41 + math.abs(e) * 2 ^ -21.19) / math.abs(math.cos(a)) + 2 * ulp_at(e)
  end, "abs")
  -- exp2(y * __log2f(x)): log2's error, times y, becomes a relative error of 2^(...)
  check("__powf", 9, function(a, b) return b ^ a end, function(a, b, e)
    local l = math.log(b, 2)
    local lerr = near_one(b) and 2 ^ -22 or 2 * ulp_at(l)
    local p = a * l
    return math.abs(e) * (ln2 * (math.abs(a) * lerr + ulp_at(p) / 2) * 1.001 + 2 ^ -21) + 2 * ulp_at(e)
  end, "abs")
  check("__fdividef", 10, function(a, b) return a / b end, function() return 2 end, "ulp")
  check("rsqrtf", 11, function(_, b) return 1 / math.sqrt(b) end, function() return 2 end, "ulp")

  it("leaves the libm function and the division exact", function()
    for i = 1, N do
      expect(ulps(out[i][12], math.exp(xs[i]))):at_most(1)
      expect(out[i][13]):equals(f32(xs[i] / ys[i]))
    end
  end)
  it("gives the same result for the same inputs, run after run", function()
    expect(run() == bytes):is_true()
  end)
  it("behaves as the hardware in the special ranges", function()
    local m = module("fast_math")
    local o <close> = emu.alloc(4 * 15, "o", 4)
    expect(m:launch("specials", { grid = 1, block = 32, args = { o } })):is_true()
    local v = floats(o, 15)
    local function nan(x) return x ~= x end
    expect(v[1]):equals(0.0)
    expect(nan(v[2])):is_true()
    expect(ulps(v[3], 2 ^ -126)):at_most(2)
    expect(v[4]):equals(0.0)
    expect(nan(v[5])):is_true()
    expect(v[6]):equals(-math.huge)
    expect(v[7]):equals(-math.huge)
    expect(v[8]):equals(math.huge)
    expect(nan(v[9])):is_true()
    expect(v[10]):equals(0.0)
    expect(math.abs(v[11] - math.sin(f32(12345.678)))):at_most(2 ^ -21.41 + 12346 * (2 ^ -23 + 5e-8))
    expect(v[12]):equals(math.huge)
    expect(v[13]):equals(0.0)
    expect(v[14]):equals(0.0)
    expect(v[15]):equals(0.0)
  end)
end)
