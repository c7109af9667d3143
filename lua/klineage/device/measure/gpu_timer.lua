-- Timing kernels on a GPU the way the gate needs it: each sample starts
-- from a flushed L2, the kernels'
-- durations come from CUPTI activity records (the GPU's own timestamps,
-- summed over every launch of the run) and are cross-checked against
-- events around the same region, and the SM clock is probed after each
-- sample so that a throttled sample can be flagged.
--
--   local t = gpu_timer.new(ctx, device)      -- device: an entry of cuda.devices()
--   local ns, info = t:sample(function() fn:launch{...} end)
--   info = { event_ns, kernels, clock_mhz, throttled }
--   t:close()
local cuda = require "kl.cuda"
local cupti = require "kl.cupti"
local verdicts = require "klineage.base.verdicts"
local cache = require "klineage.device.cache"

local M = {}
M.__index = M

-- One thread spins on the global timer and counts SM cycles meanwhile:
-- cycles / nanoseconds is the SM clock the kernels ran at.
-- The L2 flush reads a buffer twice the L2's size. A write flush (a memset)
-- would also evict the candidate's lines, but it leaves the L2 full of dirty
-- lines that the timed kernel then pays to write back: measured on the
-- H200, softmax at 8192 x 1024 read 3109 GB/s after a write flush and
-- 3469-3513 GB/s after a read flush. Reading leaves only clean lines.
local FLUSH = [[
extern "C" __global__ void kl_l2_flush_read(const float4 *p, long long n4, float *sink) {
  float s = 0.f;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4;
       i += (long long)gridDim.x * blockDim.x) s += p[i].x + p[i].w;
  if (s == 1234.5f) sink[0] = s;
}
]]

local PROBE = [[
extern "C" __global__ void kl_sm_clock_probe(unsigned long long spin_ns, unsigned long long *out) {
  unsigned long long t0, t1;
  long long c0 = clock64();
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1)); } while (t1 - t0 < spin_ns);
  long long c1 = clock64();
  out[0] = (unsigned long long)(c1 - c0);
  out[1] = t1 - t0;
}
]]

M.THROTTLE_FRACTION = 0.75 -- a sample under 75% of the maximum SM clock is flagged

function M.new(ctx, device, opts)
  opts = opts or {}
  assert(cuda.load())
  local arch = string.format("sm_%d%d", device.major, device.minor)
  local r = assert(cache.compile(PROBE .. FLUSH, { arch = arch, name = "kl_timer_helpers.cu" }))
  local mod = assert(ctx:load(r.cubin))
  local self = setmetatable({
    ctx = ctx, device = device, module = mod,
    probe = assert(mod:func("kl_sm_clock_probe")),
    flush_fn = assert(mod:func("kl_l2_flush_read")),
    probe_out = assert(ctx:alloc(16)),
    flush_buf = assert(ctx:alloc(math.max(2 * (device.l2_bytes or (64 << 20)), 1 << 20))),
    max_clock_mhz = (device.clock_khz or 0) / 1000,
    probe_ns = opts.probe_ns or 100000,
  }, M)
  assert(self.flush_buf:fill_u32(0))
  assert(cupti.activity_start())
  return self
end

-- Evicts everything from L2 by reading a buffer twice its size.
function M:flush()
  return self.flush_fn:launch { grid = (self.device.sms or 132) * 4, block = 256,
    args = { self.flush_buf, { "i64", self.flush_buf.size // 16 }, self.probe_out } }
end

function M:sm_clock_mhz()
  assert(self.probe:launch { grid = 1, block = 1, args = { { "u64", self.probe_ns }, self.probe_out } })
  local ok, err = self.ctx:synchronize()
  if not ok then return nil, err end
  local cycles, ns = string.unpack("<I8I8", self.probe_out:download())
  if ns == 0 then return nil, "clock probe measured no time" end
  return cycles / ns * 1000
end

-- Times one run: run() launches the kernels. Returns the summed CUPTI
-- duration in ns of the launches it made, and an info table; or nil,
-- failure (fault) when a launch or the synchronization failed, or the
-- timestamps do not add up.
local function sample(self, run)
  local ok, err = self:flush()
  if not ok then return nil, err end
  ok, err = self.ctx:synchronize()
  if not ok then return nil, err end
  cupti.activity_collect() -- records from before this sample are not ours
  local a, b = self.ctx:event(), self.ctx:event()
  a:record()
  ok, err = run()
  if not ok and err then return nil, err end
  b:record()
  ok, err = self.ctx:synchronize()
  if not ok then return nil, err end
  local event_ms = a:elapsed(b)
  local recs = assert(cupti.activity_collect())
  local total, kernels, untimed = 0, 0, 0
  for _, k in ipairs(recs) do
    if k.name ~= "kl_sm_clock_probe" and k.name ~= "kl_l2_flush_read" then
      if k.timed then total = total + k.duration else untimed = untimed + 1 end
      kernels = kernels + 1
    end
  end
  if kernels == 0 then return nil, "no kernel ran in the timed region" end
  if untimed > 0 then return nil, string.format("%d launches were not timed by CUPTI", untimed) end
  local mhz = self:sm_clock_mhz()
  local info = {
    event_ns = event_ms * 1e6, kernels = kernels, clock_mhz = mhz,
    throttled = mhz ~= nil and self.max_clock_mhz > 0 and mhz < M.THROTTLE_FRACTION * self.max_clock_mhz,
  }
  -- The kernels ran inside the event window: their GPU time cannot exceed
  -- it. Work that escaped to another stream shows up as the opposite: a
  -- window much longer than the kernels (checked by the gate's anti-cheat).
  if total > info.event_ns * 1.02 + 2000 then
    return nil, string.format("CUPTI time %.0f ns exceeds the event window %.0f ns", total, info.event_ns)
  end
  cupti.activity_collect() -- drop the probe's record
  return total, info
end

function M:sample(run) return verdicts.lift("fault", sample(self, run)) end

function M:close()
  cupti.activity_stop()
  self.flush_buf:close()
  self.probe_out:close()
end

return M
