-- A kernel with cooperative groups through the whole gate on a GPU: it
-- compiles (cooperative_groups.h needs the toolkit's include/cccl under
-- CUDA 13), agrees with the shared-memory v0 (itself checked against
-- reference.c), and is timed inside the roofline.
local gate = require "klineage.gate"
local workload = require "klineage.workload"
local pool_mod = require "klineage.device.worker.pool"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local fixture = here .. "/../fixtures/workloads/block_sum_cg"

describe("cooperative groups on the cuda backend", function()
  local w = assert(workload.load(fixture))
  local pool = assert(pool_mod.new { backend = "cuda", timeout = 120 })
  local ctx = assert(require("klineage.device.context").new { journal = false, pool = pool })
  local h = assert(io.open(fixture .. "/cg.cu", "rb"))
  -- a comment no earlier run wrote: the compile is a real one, not the cache's
  local src = h:read("a") .. string.format("\n// run %d %d\n", os.time(), math.random(1 << 30))
  h:close()

  it("passes a block reduction with thread_block_tile<32>, cg::reduce and shfl_down", function()
    local r = gate.evaluate(ctx, { source = src, file = "cg.cu" }, w)
    if r.verdict ~= "ok" then fail("%s: %s", r.verdict, require("cjson").encode(r.stages)) end
    expect(r.backend):equals("cuda")
    expect(r.stages.compile.verdict):equals("ok")
    local p = r.stages.profile
    expect(p.source):equals("cupti")
    expect(p.pct_of_roofline):at_most(100 / gate.ROOFLINE_MARGIN)
  end)

  it("fails the same kernel with its last warp's partial dropped", function()
    local broken = src:gsub("warp%.thread_rank%(%) < BLOCK / 32", "warp.thread_rank() < BLOCK / 32 - 1")
    local r = gate.evaluate(ctx, { source = broken, file = "cg_dropped.cu" }, w, { profile = false })
    expect(r.verdict):equals("wrong")
  end)
  ctx:close(); pool:close()
end)
