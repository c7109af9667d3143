local occupancy = require "kl.occupancy"

describe("kl.occupancy", function()
  it("computes occupancy with the limiting factor", function()
    local r = assert(occupancy.compute({ arch = "sm_90", registers = 64, threads = 256 }))
    expect(r.active_blocks):equals(4)
    expect(r.active_warps):equals(32)
    expect(r.occupancy):equals(0.5)
    expect(r.limited_by):equals("registers")
    expect(r.limits.warps):equals(8)
    expect(r.limits.barriers):is_nil()
  end)
  it("takes a kl.nvrtc function record's field names", function()
    local fn = { registers = 37, smem = 4096, barriers = 1, stack = 0 }
    local r = assert(occupancy.compute({ arch = "sm_90", registers = fn.registers, smem = fn.smem, barriers = fn.barriers,
                                         threads = 128, dynamic_smem = 40000 }))
    expect(r.active_blocks):equals(5)
    expect(r.limited_by):equals("smem")
    expect(r.smem_per_block):equals(45184)
    expect(r.regs_per_warp):equals(1280)
  end)
  it("raises the opt-in by itself above 48 KiB, and can be told not to", function()
    local r = assert(occupancy.compute({ arch = "sm_90", registers = 32, threads = 128, dynamic_smem = 65536 }))
    expect(r.optin):is_true()
    expect(r.active_blocks):equals(3)
    r = assert(occupancy.compute({ arch = "sm_90", registers = 32, threads = 128, dynamic_smem = 65536, optin = false }))
    expect(r.active_blocks):equals(0)
    expect(r.why_zero):contains("48 KiB")
  end)
  it("lists limits per architecture", function()
    expect(occupancy.archs()):equals({ "sm_80", "sm_86", "sm_89", "sm_90" })
    local l = assert(occupancy.limits("sm_86"))
    expect(l.max_warps_per_sm):equals(48)
    expect(l.max_blocks_per_sm):equals(16)
    expect(assert(occupancy.limits("sm_90")).smem_per_sm):equals(233472)
  end)
  it("says which architectures it knows", function()
    local r, err = occupancy.compute({ arch = "sm_75", registers = 32, threads = 128 })
    expect(r):is_nil()
    expect(err):contains("unknown architecture 'sm_75'")
    expect(err):contains("sm_80 sm_86 sm_89 sm_90")
  end)
  it("raises on misuse", function()
    expect(function() occupancy.compute({ arch = "sm_90", registers = 32 }) end):raises("'threads' must be a positive integer")
    expect(function() occupancy.compute({ arch = "sm_90", registers = -1, threads = 32 }) end):raises("must not be negative")
    expect(function() occupancy.compute({ arch = "sm_90", registers = 1.5, threads = 32 }) end):raises("must be an integer")
  end)
  it("agrees with ptxas numbers for a real compile", function()
    local nvrtc = require "kl.nvrtc"
    local res = assert(nvrtc.compile([[
      extern "C" __global__ void k(float *x) {
        __shared__ float tile[1024];
        tile[threadIdx.x] = x[threadIdx.x];
        __syncthreads();
        x[threadIdx.x] = tile[1023 - threadIdx.x];
      }]], { arch = "sm_90" }))
    local fn = res.functions.k
    expect(fn.smem):equals(4096)
    local r = assert(occupancy.compute({ arch = "sm_90", registers = fn.registers, smem = fn.smem, barriers = fn.barriers, threads = 1024 }))
    -- 4096 + 1024 reserved = 5120 B per block fits 45 times; 32 warps per block fit twice
    expect(r.limits.smem):equals(45)
    expect(r.active_blocks):equals(2)
    expect(r.occupancy):equals(1.0)
  end)
end)

describe("kl.occupancy against the driver", function()
  it("agrees with every answer of cudaOccupancyMaxActiveBlocksPerMultiprocessor recorded on an H200", function()
    -- Recorded by tests/fixtures/gpu/gate_check.cu --dump on an H200
    -- (driver 580.159.04): registers, static smem, threads, dynamic smem,
    -- the driver's blocks per SM.
    local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$")
    local n, disagree, first = 0, 0, nil
    for line in io.lines(here .. "/../fixtures/occupancy_h200.tsv") do
      if not line:match("^#") then
        local regs, static, threads, dyn, driver = line:match("^(%d+)\t(%d+)\t(%d+)\t(%d+)\t(%d+)$")
        local r = assert(occupancy.compute({ arch = "sm_90", registers = tonumber(regs), smem = tonumber(static),
                                             threads = tonumber(threads), dynamic_smem = tonumber(dyn) }))
        n = n + 1
        if r.active_blocks ~= tonumber(driver) then
          disagree = disagree + 1
          first = first or line
        end
      end
    end
    expect(n):at_least(1000)
    expect(first):is_nil()
    expect(disagree):equals(0)
  end)
end)
