local facts = require "klineage.facts"
local workload = require "klineage.workload"
local verdicts = require "klineage.base.verdicts"
local home = require("kl.host").home

local function read(wl, file)
  local h = assert(io.open(home .. "/gpu/workloads/" .. wl .. "/" .. file))
  local s = h:read("a")
  h:close()
  return s
end

local specs = {}
local function spec(wl)
  specs[wl] = specs[wl] or assert(workload.load(wl))
  return specs[wl]
end

-- Facts of a lineage file at one of its workload's test sizes; compiles
-- once per (file, fn, size, arch).
local memo = {}
local function of(wl, file, fn, test_index, extra)
  local key = table.concat({ wl, file, fn or "", test_index or 0 }, "|")
  if not extra and memo[key] then return memo[key] end
  local w = spec(wl)
  local opts = { workload = w, params = w.test_params[test_index or 3] }
  for k, v in pairs(extra or {}) do opts[k] = v end
  local f, err = facts.of(read(wl, file), fn or w.kernel, opts)
  assert(f, tostring(err))
  if not extra then memo[key] = f end
  return f
end

local function expect_vocabulary(f)
  local n = 0
  for name, v in pairs(f.values) do
    n = n + 1
    local e = facts.describe(name)
    expect(e ~= nil):is_true()
    if not e then error("not in the vocabulary: " .. name) end
    expect(f.from[name]):equals(e.from)
    expect(f:unit(name)):equals(e.unit)
    expect(type(v) == "number" or type(v) == "boolean" or type(v) == "string"):is_true()
  end
  expect(n):at_least(1)
end

describe("facts: the vocabulary", function()
  it("is data: every entry has a name, unit, meaning and a known provenance, names unique", function()
    local seen, from = {}, { source = 1, nvrtc = 1, occupancy = 1, workload = 1, arch = 1, profile = 1 }
    for _, e in ipairs(facts.vocabulary) do
      expect(type(e.name) == "string" and type(e.unit) == "string" and type(e.meaning) == "string"):is_true()
      expect(from[e.from] ~= nil):is_true()
      expect(seen[e.name]):is_nil()
      seen[e.name] = true
    end
  end)
  it("describes a pattern name and refuses what it does not have", function()
    expect(facts.describe("access.A.coalesced").unit):equals("boolean")
    expect(facts.describe("shared.As.bytes").unit):equals("bytes")
    expect(facts.describe("size.M.div16").unit):equals("boolean")
    expect(facts.describe("size.M.div.BM").name):equals("size.<P>.div.<NAME>")
    expect(facts.describe("occupancy").unit):equals("fraction")
    expect(facts.describe("access.A")):is_nil()
    expect(facts.describe("made.up")):is_nil()
    expect(facts.describe("loop.x.y.trip_count")):is_nil() -- a pattern part is one name, no dots
    expect(facts.describe(nil)):is_nil()
  end)
  it("set raises on a name outside the vocabulary and leaves nil absent", function()
    local f = facts.new()
    expect(pcall(f.set, f, "made.up", 1, "source")):is_false()
    expect(pcall(f.set, f, "registers", 1, "guess")):is_false()
    f:set("registers", nil, "nvrtc")
    expect(f.values.registers):is_nil()
    f:set("profile.time_ms", 0 / 0, "profile")
    expect(f.values["profile.time_ms"]):is_nil()
  end)
  it("every fact produced over the lineages is in it, with the entry's unit and provenance", function()
    local cases = {
      { "sgemm", "v0_naive.cu" }, { "sgemm", "v2_smem_tiles.cu" }, { "sgemm", "v5_vectorized.cu" },
      { "sgemm", "v7_double_buffer.cu" }, { "transpose", "v2_padded.cu" }, { "reduction", "v3_first_add_on_load.cu" },
      { "reduction", "v3_first_add_on_load.cu", "reduce_finish" }, { "reduction", "v8_warp_shuffle.cu" },
    }
    for _, c in ipairs(cases) do expect_vocabulary(of(c[1], c[2], c[3])) end
  end)
end)

describe("facts: every lineage file", function()
  it("gives facts at every test size (or says why not) whose names are all in the vocabulary", function()
    local n = 0
    for _, wl in ipairs({ "bfs", "conv2d", "raytrace", "reduction", "sgemm", "softmax", "transpose" }) do
      local w = spec(wl)
      for _, file in ipairs(w.lineage) do
        local src = read(wl, file)
        for _, tp in ipairs(w.test_params) do
          local f, err = facts.of(src, w.kernel, { workload = w, params = tp, compile = false })
          if not f then error(wl .. "/" .. file .. ": " .. tostring(err)) end
          for name in pairs(f.values) do
            if not facts.describe(name) then error(wl .. "/" .. file .. ": not in the vocabulary: " .. name) end
          end
          expect(f.values["loops.count"]):at_least(0)
          expect(type(f.values["launch.allowed"])):equals("boolean")
          n = n + 1
        end
      end
    end
    expect(n):at_least(100)
  end)
end)

describe("facts: static, from kl.source", function()
  it("sgemm v0 reads A along a row per thread (not coalesced along threadIdx.x); v1 does not", function()
    local v0, v1 = of("sgemm", "v0_naive.cu"), of("sgemm", "v1_coalesced.cu")
    expect(v0.values["access.A.coalesced"]):is_false()
    expect(v0.values["access.A.tx_stride_kind"]):equals("symbolic")
    expect(v0.values["access.A.tx_stride"]):is_nil() -- symbolic: absent, not 0
    expect(v0.values["access.C.coalesced"]):is_false()
    expect(v1.values["access.A.coalesced"]):is_true()
    expect(v1.values["access.C.coalesced"]):is_true()
    expect(v1.values["access.B.tx_stride"]):equals(1)
    expect(v0.values["access.A.reads"]):is_true()
    expect(v0.values["access.A.writes"]):is_false()
    expect(v0.values["access.C.writes"]):is_true()
    expect(v0.values["access.A.const"]):is_true()
    expect(v0.from["access.A.coalesced"]):equals("source")
  end)
  it("sgemm v2 stages 32 x 32 float tiles with both barriers inside the k-loop", function()
    local f = of("sgemm", "v2_smem_tiles.cu")
    local v = f.values
    expect(v["shared.count"]):equals(2)
    expect(v["shared.As.bytes"]):equals(32 * 32 * 4)
    expect(v["shared.As.dims"]):equals("32x32")
    expect(v["shared.Bs.elem_bytes"]):equals(4)
    expect(v["shared.bytes"]):equals(8192)
    expect(v["shared.As.bank_ways"]):equals(1)
    expect(v["barriers.count"]):equals(2)
    expect(v["barriers.in_loop"]):equals(2)
    expect(v["loop.1.var"]):equals("k0")
    expect(v["loop.1.barriers"]):equals(2)
    expect(v["loop.1.trip_count"]):is_nil() -- k0 < K: K is no constant
    expect(v["loop.1.trip_count_at_workload"]):equals(5) -- cdiv(136, 32)
    expect(v["loop.2.depth"]):equals(2)
    expect(v["loop.2.trip_count"]):equals(32) -- kk < TILE
    expect(v["loops.max_depth"]):equals(2)
    expect(v["define.TILE"]):equals(32)
    -- ptxas agrees with the source's shared bytes
    expect(v.smem_static):equals(v["shared.bytes"])
  end)
  it("transpose v1 conflicts on its 32 x 32 tile and v2's padding to 32 x 33 removes it", function()
    local v1, v2 = of("transpose", "v1_smem_tile.cu"), of("transpose", "v2_padded.cu")
    expect(v2.values["shared.tile.dims"]):equals("32x33")
    expect(v2.values["shared.tile.bytes"]):equals(32 * 33 * 4)
    expect(v2.values["shared.tile.bank_ways"]):equals(1)
    expect(v1.values["shared.tile.bank_ways"]):equals(32)
    local v0 = of("transpose", "v0_naive.cu")
    expect(v0.values["access.in.coalesced"]):is_true()
    expect(v0.values["access.out.coalesced"]):is_false()
    expect(v0.values["loops.count"]):equals(0)
    expect(v0.values["loops.max_depth"]):equals(0)
  end)
  it("sgemm v7 has __launch_bounds__, #pragma unroll loops with constant trip counts", function()
    local v = of("sgemm", "v7_double_buffer.cu").values
    expect(v["launch_bounds.max_threads"]):equals(256)
    expect(v["pragma_unroll.count"]):at_least(1)
    expect(v["loops.constant_trips"]):at_least(1)
    expect(v["loop.1.pragma_unroll"]):is_true()
    expect(v["loop.1.unroll"]):is_nil() -- a bare #pragma unroll: no factor, not 0
    expect(v["define.BK"]):equals(8)
    expect(v["occupancy"] <= 0.25 + 1e-9):is_true() -- 127 registers x 256 threads
  end)
  it("sgemm v5 loads A and B as float4; v4 as floats", function()
    expect(of("sgemm", "v5_vectorized.cu").values["access.A.vector_width"]):equals(4)
    expect(of("sgemm", "v5_vectorized.cu").values["access.B.vector_width"]):equals(4)
    expect(of("sgemm", "v4_blocktile_2d.cu").values["access.A.vector_width"]):equals(1)
  end)
  it("sees an access that is the same element every iteration as loop reuse", function()
    local src = [[
extern "C" __global__ void k(int n, const float *a, const float *b, float *out) {
  float s = 0;
  for (int i = 0; i < n; ++i) s += a[blockIdx.x] * b[i * 32 + threadIdx.x];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
]]
    local v = assert(facts.of(src, "k", { compile = false })).values
    expect(v["access.a.loop_reuse"]):is_true()
    expect(v["access.b.loop_reuse"]):is_false()
    expect(v["access.b.coalesced"]):is_true()
    expect(v["access.out.in_loop"]):equals(0)
  end)
  it("counts trips of counted loops only, with constants, or with the params too", function()
    local src = [[
#define N 16
// @kl launch grid(1) block(32)
extern "C" __global__ void k(int n, float *x) {
  for (int i = 0; i < 10; i += 3) x[i] = 0;
  for (int i = 10; i > 0; --i) x[i] = 1;
  #pragma unroll 4
  for (int i = 1; i <= N; i++) x[i] = 2;
  for (;;) { break; }
  while (n > 0) n--;
  for (int i = 0; i < n; ++i) x[i] = 3;
  for (unsigned s = 8; s > 0; s >>= 1) x[s] = 4;
  for (int i = 0; i < 5; i -= 1) x[i] = 5;
}
]]
    local f = assert(facts.of(src, "k", { params = { n = 7 }, compile = false }))
    local v = f.values
    expect(v["loop.1.trip_count"]):equals(4)
    expect(v["loop.2.trip_count"]):equals(10)
    expect(v["loop.3.trip_count"]):equals(16)
    expect(v["loop.3.unroll"]):equals(4)
    expect(v["loop.4.trip_count"]):is_nil()
    expect(v["loop.5.kind"]):equals("while")
    expect(v["loop.5.trip_count"]):is_nil()
    expect(v["loop.6.trip_count"]):is_nil()
    expect(v["loop.6.trip_count_at_workload"]):equals(7)
    expect(v["loop.7.trip_count"]):is_nil() -- s >>= 1 is no counted step
    expect(v["loop.8.trip_count"]):is_nil() -- counts away from its bound
    expect(v["loops.count"]):equals(8)
    expect(v["loops.constant_trips"]):equals(3)
    expect(v["pragma_unroll.count"]):equals(1)
  end)
end)

describe("facts: launch, resources and occupancy", function()
  it("evaluates the launch annotations at the workload's params", function()
    local v = of("sgemm", "v2_smem_tiles.cu").values -- M = 384, N = 640
    expect(v["launch.grid.x"]):equals(20)
    expect(v["launch.grid.y"]):equals(12)
    expect(v["launch.block.x"]):equals(32)
    expect(v["launch.threads"]):equals(1024)
    expect(v["launch.blocks"]):equals(240)
    expect(v["launch.smem_dynamic"]):equals(0)
    expect(v["launch.allowed"]):is_true()
  end)
  it("uses a kernel's own launch line: reduce_finish runs one block of FINISH_THREADS", function()
    local f = of("reduction", "v3_first_add_on_load.cu", "reduce_finish")
    expect(f.values["launch.grid.x"]):equals(1)
    expect(f.values["launch.threads"]):equals(f.values["define.FINISH_THREADS"])
    local r = of("reduction", "v3_first_add_on_load.cu", "reduce")
    expect(r.values["launch.threads"]):equals(r.values["define.BLOCK"])
  end)
  it("a size the requires lines exclude: launch.allowed false, no geometry", function()
    local f = of("sgemm", "v4_blocktile_2d.cu", nil, 1) -- 67 x 45 x 33
    expect(f.values["launch.allowed"]):is_false()
    expect(f.values["launch.threads"]):is_nil()
    expect(f.values.occupancy):is_nil() -- no block size, no occupancy
    expect(f.values.registers):at_least(1)
  end)
  it("gives registers, spills and an occupancy in (0, 1] with its limiter", function()
    for _, file in ipairs({ "v0_naive.cu", "v2_smem_tiles.cu", "v6_warptile.cu" }) do
      local f = of("sgemm", file)
      local v = f.values
      expect(v.registers):at_least(1)
      expect(v.spills):equals(v.spill_stores + v.spill_loads > 0)
      expect(v.occupancy > 0 and v.occupancy <= 1):is_true()
      expect(type(v["occupancy.limited_by"])):equals("string")
      expect(f.from.registers):equals("nvrtc")
      expect(f.from.occupancy):equals("occupancy")
      expect(v.registers_arch):equals("sm_90")
      expect(v.smem_per_block):equals(v.smem_static + v["launch.smem_dynamic"])
    end
  end)
  it("takes a given compile result instead of compiling, and none means no resources", function()
    local w = spec("sgemm")
    local src = read("sgemm", "v2_smem_tiles.cu")
    local fake = { arch = "sm_90", functions = { sgemm = { registers = 200, smem = 8192, stack = 0,
                   spill_stores = 0, spill_loads = 0, barriers = 1, entry = true } } }
    local f = assert(facts.of(src, "sgemm", { workload = w, params = w.test_params[3], compile = fake }))
    expect(f.values.registers):equals(200)
    -- 200 x 1024 registers do not fit an SM: occupancy 0 with the reason, no limiter
    expect(f.values.occupancy):equals(0.0)
    expect(type(f.values["occupancy.why_zero"])):equals("string")
    expect(f.values["occupancy.limited_by"]):is_nil()
    fake.functions.sgemm.registers = 64
    local h = assert(facts.of(src, "sgemm", { workload = w, params = w.test_params[3], compile = fake }))
    expect(h.values["occupancy.limited_by"]):equals("registers")
    expect(h.values.occupancy):equals(0.5)
    local g = assert(facts.of(src, "sgemm", { workload = w, params = w.test_params[3], compile = false }))
    expect(g.values.registers):is_nil()
    expect(g.values.occupancy):is_nil()
    expect(g.values["launch.threads"]):equals(1024)
  end)
  it("for_arch recomputes the arch limits and occupancy; the registers stay those compiled for", function()
    local f = of("sgemm", "v0_naive.cu")
    local g = assert(facts.for_arch(f, "sm_86"))
    expect(g.values.arch):equals("sm_86")
    expect(g.values["arch.max_warps_per_sm"]):equals(48)
    expect(g:unit("arch.max_warps_per_sm")):equals("warps/SM")
    expect(f.values["arch.max_warps_per_sm"]):equals(64) -- f is untouched
    expect(f.values.occupancy):equals(1.0)
    -- one block of 1024 threads = 32 of 48 warps
    expect(g.values.occupancy):near(32 / 48, 1e-9)
    expect(g.values.registers_arch):equals("sm_90")
    local a80 = assert(facts.for_arch(of("sgemm", "v7_double_buffer.cu"), "sm_80"))
    expect(a80.values["arch.smem_per_sm"]):equals(167936)
    expect(a80.values["arch.max_blocks_per_sm"]):equals(32)
    expect(a80.values["occupancy.limit.smem"] < of("sgemm", "v7_double_buffer.cu").values["occupancy.limit.smem"]):is_true()
    expect(facts.for_arch(f, "sm_99")):is_nil()
    local _, err = facts.for_arch(f, "sm_75")
    expect(err.verdict):equals("bad_input")
  end)
  it("for_arch with that arch's compile takes its registers", function()
    local nvrtc = require "kl.nvrtc"
    local src = read("sgemm", "v2_smem_tiles.cu")
    local res = assert(nvrtc.compile(src, { arch = "sm_86" }))
    local f = of("sgemm", "v2_smem_tiles.cu")
    local g = assert(facts.for_arch(f, "sm_86", res))
    expect(g.values.registers):equals(res.functions.sgemm.registers)
    expect(g.values.registers_arch):equals("sm_86")
    local _, err = facts.for_arch(f, "sm_80", res)
    expect(err.verdict):equals("bad_input")
  end)
end)

describe("facts: workload", function()
  it("gives sizes, divisibility by 2..32 and by the tile constants, buffer bytes and alignment", function()
    local ragged = of("sgemm", "v2_smem_tiles.cu", nil, 1).values -- 67 x 45 x 33
    expect(ragged["size.M"]):equals(67)
    expect(ragged["size.M.div2"]):is_false()
    expect(ragged["size.M.div.TILE"]):is_false()
    expect(ragged["buffer.A.bytes"]):equals(67 * 33 * 4)
    expect(ragged["buffer.A.align"]):equals(4)
    expect(ragged["buffer.A.align16"]):is_false()
    local v = of("sgemm", "v2_smem_tiles.cu", nil, 3).values -- 384 x 640 x 136
    expect(v["size.M.div32"]):is_true()
    expect(v["size.K.div8"]):is_true()
    expect(v["size.K.div16"]):is_false()
    expect(v["size.N.div.TILE"]):is_true()
    expect(v["size.K.div.TILE"]):is_false()
    expect(v["buffer.C.align16"]):is_true()
    expect(v["size.alpha"]):is_nil() -- a float parameter has no divisibility
    local t = of("sgemm", "v7_double_buffer.cu", nil, 3).values
    expect(t["size.M.div.BM"]):is_true()
    expect(t["size.K.div.BK"]):is_true()
  end)
  it("without params there are static facts only", function()
    local f = assert(facts.of(read("sgemm", "v2_smem_tiles.cu"), "sgemm", { compile = false }))
    expect(f.values["shared.As.bytes"]):equals(4096)
    expect(f.values["launch.threads"]):is_nil()
    expect(f.values["size.M"]):is_nil()
    expect(f.values.arch):equals("sm_90")
  end)
end)

describe("facts: profile", function()
  it("is absent without a record, and on an emu record that measured nothing", function()
    local f = of("sgemm", "v2_smem_tiles.cu")
    for name in pairs(f.values) do expect(name:match("^profile%.")):is_nil() end
    local w = spec("sgemm")
    local emu = { verdict = "ok", stages = { correct = { verdict = "ok" },
                  profile = { verdict = "skipped", message = "no timing on emu" } } }
    local g = assert(facts.of(read("sgemm", "v2_smem_tiles.cu"), "sgemm",
      { workload = w, params = w.test_params[3], compile = false, record = emu }))
    for name in pairs(g.values) do expect(name:match("^profile%.")):is_nil() end
  end)
  it("reads a gate record's profile and metrics stages", function()
    local w = spec("sgemm")
    local record = { verdict = "ok", stages = {
      profile = { verdict = "ok", median_ms = 1.25, pct_of_roofline = 40.5, gbps = 900, gflops = 12000 },
      metrics = { verdict = "ok", values = {
        ["dram__throughput.avg.pct_of_peak_sustained_elapsed"] = 61.5,
        ["sm__warps_active.avg.pct_of_peak_sustained_active"] = 45,
        ["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] = 1024,
        ["dram__bytes_read.sum"] = 1000, ["dram__bytes_write.sum"] = 24,
        ["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] = 800,
        ["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] = 200,
      } } } }
    local f = assert(facts.of(read("sgemm", "v2_smem_tiles.cu"), "sgemm",
      { workload = w, params = w.test_params[3], compile = false, record = record }))
    local v = f.values
    expect(v["profile.time_ms"]):equals(1.25)
    expect(v["profile.pct_of_roofline"]):equals(40.5)
    expect(v["profile.effective_gbps"]):equals(900)
    expect(v["profile.dram_throughput_pct"]):equals(61.5)
    expect(v["profile.achieved_occupancy"]):near(0.45, 1e-12)
    expect(v["profile.smem_bank_conflicts"]):equals(1024)
    expect(v["profile.dram_bytes"]):equals(1024)
    expect(v["profile.sectors_per_request"]):equals(4.0)
    expect(v["profile.global_ld_bytes_per_sector_pct"]):is_nil() -- not measured
    expect(f.from["profile.time_ms"]):equals("profile")
    expect_vocabulary(f)
  end)
  it("ignores a failed profile stage and malformed metric values", function()
    local f = facts.new()
    facts.profile(f, { stages = { profile = { verdict = "suspicious", median_ms = 0.001 },
                                  metrics = { verdict = "ok", values = { ["dram__throughput.avg.pct_of_peak_sustained_elapsed"] = "x" } } } })
    facts.profile(f, { stages = "nope" })
    facts.profile(f, 42)
    expect(next(f.values)):is_nil()
  end)
end)

describe("facts: hostile inputs", function()
  local function bad(f, err)
    expect(f):is_nil()
    expect(verdicts.is_failure(err)):is_true()
    expect(err.verdict):equals("bad_input")
  end
  local k = [[
// @kl launch grid(cdiv(n, 32)) block(32)
extern "C" __global__ void k(int n, float *x) { x[threadIdx.x] = 0; }
]]
  it("a kernel with no annotations, at params", function()
    local src = k:gsub("// @kl[^\n]*\n", "")
    bad(facts.of(src, "k", { params = { n = 64 }, compile = false }))
    expect(facts.of(src, "k", { compile = false })):exists() -- static facts need none
  end)
  it("a function not in the unit, a prototype, a non-string name", function()
    bad(facts.of(k, "nope", { compile = false }))
    bad(facts.of("extern \"C\" __global__ void k(int n);", "k", { compile = false }))
    bad(facts.of(k, 7, { compile = false }))
  end)
  it("garbage source", function()
    bad(facts.of("@@@ }}} ((( \0\1\2 #define", "k", {}))
    bad(facts.of(string.rep("{", 10000), "k", {}))
  end)
  it("a launch dividing by zero, params missing, an unknown arch, a wrong unit type", function()
    bad(facts.of(k:gsub("cdiv%(n, 32%)", "cdiv(n, 0)"), "k", { params = { n = 64 }, compile = false }))
    bad(facts.of(k, "k", { params = { m = 64 }, compile = false }))
    bad(facts.of(k, "k", { arch = "sm_12", compile = false }))
    bad(facts.of(42, "k"))
    bad(facts.of(k, "k", { params = "n=3" }))
    expect(pcall(facts.of, k, "k", 5)):is_false() -- misuse raises
  end)
  it("a compile that failed leaves the resources absent", function()
    local broken = k:gsub("x%[threadIdx.x%] = 0;", "x[threadIdx.x] = undefined_name;")
    local f = assert(facts.of(broken, "k", { params = { n = 64 } }))
    expect(f.values.registers):is_nil()
    expect(f.values.occupancy):is_nil()
    expect(f.values["launch.threads"]):equals(32)
  end)
  it("takes a parsed unit as well as a text", function()
    local unit = require("kl.source").parse(k)
    local f = assert(facts.of(unit, "k", { params = { n = 64 }, compile = false }))
    expect(f.values["access.x.coalesced"]):is_true()
    expect(f.values["launch.grid.x"]):equals(2)
  end)
end)
