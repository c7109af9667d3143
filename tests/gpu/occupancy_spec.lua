-- The occupancy calculator (no GPU) must agree with the driver's
-- cuOccupancyMaxActiveBlocksPerMultiprocessor on the real device for
-- kernels that hit each limit: warps, registers, shared memory, blocks.
local cuda = require "kl.cuda"
local nvrtc = require "kl.nvrtc"
local occupancy = require "kl.occupancy"

local KERNELS = [[
extern "C" __global__ void light(float *o) { o[blockIdx.x * blockDim.x + threadIdx.x] = 1.f; }

extern "C" __global__ void smem20k(float *o) {
  __shared__ float s[5000];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  o[threadIdx.x] = s[(threadIdx.x * 7) % 5000];
}

extern "C" __global__ void heavy(const float *a, float *o) {
  float r[96];
  #pragma unroll
  for (int i = 0; i < 96; i++) r[i] = a[threadIdx.x + i * 1024];
  float acc = 0.f;
  #pragma unroll
  for (int j = 0; j < 96; j++) acc += r[j] * r[95 - j] + r[(j * 5) % 96];
  o[threadIdx.x] = acc;
}

extern "C" __global__ void dynamic(float *o, int n) {
  extern __shared__ float d[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) d[i] = i;
  __syncthreads();
  o[threadIdx.x] = d[n - 1 - threadIdx.x];
}
]]

describe("occupancy agrees with the driver", function()
  assert(cuda.load())
  local dev = cuda.devices()[1]
  local arch = string.format("sm_%d%d", dev.major, dev.minor)
  local ctx = cuda.context(0)
  local cases = {
    { fn = "light", threads = 32 }, { fn = "light", threads = 96 }, { fn = "light", threads = 256 },
    { fn = "light", threads = 1024 }, { fn = "smem20k", threads = 128 }, { fn = "smem20k", threads = 512 },
    { fn = "heavy", threads = 128 }, { fn = "heavy", threads = 256 }, { fn = "heavy", threads = 640 },
    { fn = "dynamic", threads = 256, dynamic_smem = 16384 },
    { fn = "dynamic", threads = 256, dynamic_smem = 100 * 1024 },
    { fn = "dynamic", threads = 64, dynamic_smem = 200 * 1024 },
    { fn = "heavy", threads = 256, options = { "--maxrregcount=64" } },
    { fn = "light", threads = 512, options = { "--maxrregcount=200" } },
  }
  for _, c in ipairs(cases) do
    it(string.format("%s, %d threads, %d B dynamic, %s", c.fn, c.threads, c.dynamic_smem or 0,
      table.concat(c.options or {}, " ")), function()
      local r = assert(nvrtc.compile(KERNELS, { arch = arch, options = c.options }))
      local fn = assert(assert(ctx:load(r.cubin)):func(c.fn))
      local dyn = c.dynamic_smem or 0
      if dyn > 48 * 1024 then assert(fn:set_max_dynamic_smem(dyn)) end
      local driver = assert(fn:occupancy(c.threads, dyn))
      local f = r.functions[c.fn]
      local mine = assert(occupancy.compute { arch = arch, registers = f.registers, smem = f.smem,
        barriers = f.barriers, threads = c.threads, dynamic_smem = dyn })
      check(mine.active_blocks == driver, "driver says %d blocks/SM, calculator %d (regs %d, smem %d, limited by %s)",
        driver, mine.active_blocks, f.registers, f.smem, tostring(mine.limited_by))
    end)
  end
end)
