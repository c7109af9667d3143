-- The gate on emu against kernels that pass by what the harness leaves
-- lying about: an element neither run writes, a reference copy within the
-- candidate's reach, inputs it could see in advance. Each kernel is in
-- tests/adversarial/ (or written here, where it needs a table).
local gate = require "klineage.gate"
local workload = require "klineage.workload"
local pool_mod = require "klineage.device.worker.pool"
local randgen = require "kl.randgen"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local fixtures = here .. "/../fixtures/workloads"
local adversarial = here .. "/../adversarial"

local pool = assert(pool_mod.new { backend = "emu", timeout = 120 })
local ctx = assert(require("klineage.device.context").new { journal = false, pool = pool })
local sentinel = assert(workload.load(fixtures .. "/sentinel"))

local function self_judged(file, w)
  local c = { file = file }
  return gate.evaluate(ctx, c, w, { baseline = c })
end

describe("an element that neither run writes", function()
  it("is caught in a kernel judged against itself: each run starts from its own poison", function()
    local r = self_judged(adversarial .. "/poison/lazy_sentinel.cu", sentinel)
    expect(r.verdict):equals("wrong")
    expect(r.stages.correct.message):contains("out:")
  end)

  it("is caught where the spec forgot to zero an accumulator", function()
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p " .. dir))
    local h = assert(io.open(dir .. "/workload.lua", "w"))
    h:write([[
return {
  name = "unzeroed", kernel = "count",
  params = { n = 4096, bins = 16 }, test_params = { { n = 1000 }, { n = 3001, bins = 7 } },
  buffers = { keys = { "f32", "n", init = "uniform" }, counts = { "u32", "bins", output = true } },
  args = { "n", "bins", "keys", "counts" }, flops = "n", bytes = "4*n",
  lineage = { "count.cu" },
  run = function(ctx, p) ctx:launch({}) end, -- no ctx:zero("counts")
}
]])
    h:close()
    assert(os.execute("cp " .. adversarial .. "/poison/unzeroed_counts.cu " .. dir .. "/count.cu"))
    local w = assert(workload.load(dir))
    local r = self_judged(dir .. "/count.cu", w)
    os.execute("rm -rf " .. dir)
    expect(r.verdict):equals("wrong")
  end)
end)

describe("a kernel the device could not launch", function()
  it("is a launch_error on emu too: its registers at a block of 1024 fit no multiprocessor of sm_90", function()
    local saxpy = assert(workload.load(fixtures .. "/saxpy"))
    local r = gate.evaluate(ctx, { file = adversarial .. "/resources/register_hog.cu" }, saxpy,
                            { baseline = { file = fixtures .. "/saxpy/v0.cu" } })
    expect(r.verdict):equals("launch_error")
    expect(r.stages.compile.message):contains("no block of 1024 threads fits on an sm_90 multiprocessor (registers")
    expect(r.stages.correct):is_nil() -- refused before anything ran
  end)
end)

describe("the reference copy", function()
  it("is checksummed: a kernel that writes into it is out_of_bounds (fake worker)", function()
    local fpool = assert(pool_mod.new { backend = "fake", timeout = 30 })
    local fctx = assert(require("klineage.device.context").new { journal = false, pool = fpool })
    local saxpy = assert(workload.load(fixtures .. "/saxpy"))
    local src = assert(io.open(fixtures .. "/saxpy/v0.cu")):read("a"):gsub("void saxpy%(", "void saxpy_writes_reference(")
    local r = gate.evaluate(fctx, { source = src, file = "writes_reference.cu", kernel = "saxpy_writes_reference" }, saxpy,
      { profile = false })
    fctx:close(); fpool:close()
    expect(r.verdict):equals("out_of_bounds")
    expect(r.stages.correct.message):contains("reference copy of 'y'")
  end)

  it("kept between trials is checked against its first checksum: a kernel that poisons it never passes (fake worker)", function()
    local fpool = assert(pool_mod.new { backend = "fake", timeout = 30 })
    local fctx = assert(require("klineage.device.context").new { journal = false, pool = fpool })
    local saxpy = assert(workload.load(fixtures .. "/saxpy"))
    local src = assert(io.open(fixtures .. "/saxpy/v0.cu")):read("a"):gsub("void saxpy%(", "void saxpy_poisons_kept(")
    local good = gate.evaluate(fctx, { file = fixtures .. "/saxpy/v0.cu" }, saxpy, { profile = false, random_seeds = 0 })
    expect(good.verdict):equals("ok")
    local trials = #good.stages.correct.trials
    -- Each evaluation poisons the copy of the trial it fails at; once every
    -- fixed trial's copy held its answer, a gate that trusted the copies
    -- would pass it.
    for _ = 1, trials + 1 do
      local r = gate.evaluate(fctx, { source = src, file = "poisons_kept.cu", kernel = "saxpy_poisons_kept" }, saxpy,
        { profile = false, random_seeds = 0 })
      expect(r.verdict):equals("wrong")
    end
    local again = gate.evaluate(fctx, { file = fixtures .. "/saxpy/v0.cu" }, saxpy, { profile = false, random_seeds = 0 })
    fctx:close(); fpool:close()
    expect(again.verdict):equals("ok")
  end)

  it("is out of the candidate's reach on emu: a kernel that writes below its output is never ok", function()
    local verdicts_seen = {}
    for _ = 1, 10 do
      local r = gate.evaluate(ctx, { file = adversarial .. "/reference_copy/overwrite_below.cu" }, sentinel)
      verdicts_seen[r.verdict] = (verdicts_seen[r.verdict] or 0) + 1
      expect(r.verdict ~= "ok"):is_true()
    end
    io.write("      verdicts: ")
    for v, n in pairs(verdicts_seen) do io.write(v, " x", n, "  ") end
    io.write("\n")
  end)
end)

-- The table a kernel would need to answer the sentinel workload at the
-- test sizes and the fixed seeds, keyed by n and x[0]'s bits.
local function lookup_kernel(w)
  local x = w.buffer_by_name.x
  local entries, values = {}, {}
  for _, size in ipairs(workload.sizes(w)) do
    if not size.bench then
      local n = size.params.n
      for seed = 1, 3 do
        local xs = randgen.unpack("f32", randgen.fill("f32", n, x.init, seed, x.stream))
        local bits = string.unpack("<I4", string.pack("<f", xs[1]))
        entries[#entries + 1] = string.format("{%d, 0x%08xu, %d}", n, bits, #values)
        for i = 1, n do values[#values + 1] = xs[i] > 0 and i - 1 or -1 end
      end
    end
  end
  return string.format([[
// Answers from a table built for the fixed seeds: computes nothing.
struct kl_entry { int n; unsigned x0; int at; };
__device__ const kl_entry kl_entries[%d] = { %s };
__device__ const int kl_values[%d] = { %s };
// @kl launch grid(cdiv(n, 128)) block(128)
extern "C" __global__ void sentinel(int n, const float *x, int *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x0 = __float_as_uint(x[0]);
  for (int e = 0; e < %d; ++e)
    if (kl_entries[e].n == n && kl_entries[e].x0 == x0) { out[i] = kl_values[kl_entries[e].at + i]; return; }
  out[i] = 0;
}
]], #entries, table.concat(entries, ", "), #values, table.concat(values, ","), #entries)
end

describe("inputs nobody could see in advance", function()
  local src = lookup_kernel(sentinel)
  it("a table for the fixed seeds passes those seeds (the control)", function()
    local r = gate.evaluate(ctx, { source = src, file = "lookup_sentinel.cu" }, sentinel, { random_seeds = 0 })
    expect(r.verdict):equals("ok")
  end)
  it("fails on the seed drawn at random for the evaluation, which is recorded", function()
    local r = gate.evaluate(ctx, { source = src, file = "lookup_sentinel.cu" }, sentinel)
    expect(r.verdict):equals("wrong")
    expect(#r.drawn_seeds):equals(1)
    expect(r.stages.correct.at.seed):equals(r.drawn_seeds[1])
  end)
end)
ctx:close(); pool:close()
