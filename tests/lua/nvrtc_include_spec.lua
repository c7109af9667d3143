-- The toolkit's headers reach every NVRTC compile: cooperative_groups.h
-- includes cuda/std/type_traits, which CUDA 13 keeps under include/cccl.
-- `klineage compile` and the gate (here on emu, whose static gate is
-- NVRTC) compile a kernel that includes it; no GPU is needed.
local nvrtc = require "kl.nvrtc"
local fs = require "kl.fs"
local testing = require "klineage.cli.testing"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local fixture = here .. "/../fixtures/workloads/block_sum_cg"
local cg_kernel = fixture .. "/cg.cu"

local read = read_file -- the runner's helpers

describe("the NVRTC include path", function()
  it("holds the toolkit's include/ and, where the toolkit has it, include/cccl", function()
    local dirs = nvrtc.include_paths()
    local root = dirs[1]
    expect(root):matches("/include$")
    expect(fs.stat(root).type):equals("directory")
    local cccl = fs.stat(root .. "/cccl")
    if cccl and cccl.type == "directory" then
      expect(dirs):equals({ root, root .. "/cccl" })
    else
      expect(dirs):equals({ root })
    end
  end)

  it("resolves libcu++'s cuda/std headers in a compile", function()
    local src = "#include <cuda/std/type_traits>\n"
      .. "extern \"C\" __global__ void k(int *p) { *p = cuda::std::is_same<int, int>::value ? 1 : 2; }\n"
    local res, msg = nvrtc.compile(src, { arch = "sm_90", name = "traits.cu" })
    check(res ~= nil, "compile failed: %s", tostring(msg))
    expect(res.functions.k.entry):is_true()
  end)
end)

describe("klineage compile of a kernel with cooperative groups", function()
  it("succeeds and reports the kernel's resources", function()
    local out, code = testing.klineage("compile", cg_kernel)
    check(code == 0, "exit %s: %s", tostring(code), out)
    expect(out):matches("cg%.cu: sm_90, cubin %d+ bytes, ptx %d+ bytes\n")
    -- the warp tiles' partials: 8 floats of static shared memory, one barrier
    expect(out):matches("\n  block_sum%s+%d+%s+32%s+%d+%s+0%s+0%s+1  ")
  end)

  it("gives the same report as JSON", function()
    local out, code = testing.klineage("compile", cg_kernel, "--json")
    check(code == 0, "exit %s: %s", tostring(code), out)
    local rec = require("cjson").decode(out)
    local f = rec.functions.block_sum
    expect(f.entry):is_true()
    expect(f.registers):at_least(1)
    expect(f.smem):equals(32)
    expect(f.spill_stores):equals(0)
    expect(rec.cubin_bytes):at_least(1)
  end)
end)

describe("the gate on emu with cooperative groups", function()
  local gate = require "klineage.gate"
  local workload = require "klineage.workload"
  local pool = assert(require("klineage.device.worker.pool").new { backend = "emu", timeout = 120 })
  local ctx = assert(require("klineage.device.context").new { journal = false, pool = pool })
  local w = assert(workload.load(fixture))
  -- The gate's compiles go through the cubin cache, keyed by the source: a
  -- comment no earlier run wrote makes this run's compile a real one.
  local nonce = string.format("\n// run %d %d\n", os.time(), math.random(1 << 30))

  -- emu's prelude has thread blocks, warp tiles, cg::reduce and shfl_down:
  -- the kernel passes NVRTC's compile, then runs and agrees with v0.
  it("compiles the kernel with NVRTC and passes it", function()
    local r = gate.evaluate(ctx, { source = read(cg_kernel) .. nonce, file = "cg.cu" }, w)
    if r.verdict ~= "ok" then fail("%s: %s", r.verdict, require("cjson").encode(r.stages)) end
    expect(r.stages.compile.verdict):equals("ok")
  end)

  -- A grid-wide sync, which emu cannot run: a verdict, not a crash.
  it("says unsupported for a grid sync, after NVRTC compiled it", function()
    local src = read(cg_kernel):gsub("block%.sync%(%);", "cg::this_grid().sync();") .. nonce
    local r = gate.evaluate(ctx, { source = src, file = "grid_sync.cu" }, w)
    expect(r.verdict):equals("unsupported")
    expect(r.stages.compile.verdict):equals("ok")
    expect(require("cjson").encode(r.stages)):contains("this_grid")
  end)
  ctx:close(); pool:close()
end)
