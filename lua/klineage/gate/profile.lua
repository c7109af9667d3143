-- The profile and metrics stages: the candidate timed at a bench size by
-- the worker (CUPTI, L2 flushed, adaptive samples, every sample on inputs
-- of its own and freshly poisoned outputs), its output checked again on
-- fresh inputs afterwards, and its time held to the anti-cheat bound of
-- the device's measured ceilings.
--
--   profile.stage(session, base, cand, w, p, opts) -> stage
--       opts = { max_seconds, min_samples, max_samples, warmup,
--                profile_timeout, recheck_seed, ceilings }
--   profile.metrics(session, cand, w, p, names) -> stage
local workload = require "klineage.workload"

local M = {}

-- A time under this fraction of the anti-cheat bound is rejected: the
-- bound comes from measured ceilings, so the margin covers their own error.
M.ROOFLINE_MARGIN = 0.85

-- The anti-cheat bound is the workload's compulsory bytes at the fastest
-- bandwidth the memory system was seen to reach: no correct kernel moves
-- them faster. The flop count is information only: an algorithm may need
-- fewer operations than the spec's formula counts (Winograd, FFT), and a
-- bound built on it would reject an honest kernel.
local function bounds(stage, ceil, sec)
  -- reading alone beats a copy on HBM, and a bound must never be slower than possible
  local mem_gbps = math.max(ceil.copy_gbps, ceil.read_gbps or 0)
  local bytes_s = stage.bytes / (mem_gbps * 1e9)
  local flops_s = stage.flops / (ceil.fp32_tflops * 1e12)
  stage.roofline_ms = math.max(bytes_s, flops_s) * 1e3
  stage.pct_of_roofline = math.max(bytes_s, flops_s) / sec * 100
  stage.pct_of_fp32_peak = flops_s / sec * 100
  stage.anticheat = { bound = "compulsory bytes at the measured peak bandwidth", ms = bytes_s * 1e3,
                      margin = M.ROOFLINE_MARGIN, mem_gbps = mem_gbps }
  if sec < M.ROOFLINE_MARGIN * bytes_s then
    return string.format("%.4f ms is under the compulsory-bytes bound %.4f ms (%.4g bytes at %.0f GB/s)",
      stage.median_ms, bytes_s * 1e3, stage.bytes, mem_gbps)
  end
end

function M.stage(s, base, cand, w, p, opts)
  local stage = {}
  local steps, setup = s:launches_at(cand, w, p)
  local t = s:call({ op = "time", sequence = steps, before_sample = setup, max_seconds = opts.max_seconds or 2,
                     min_samples = opts.min_samples, max_samples = opts.max_samples, warmup = opts.warmup },
                   opts.profile_timeout)
  for k, v in pairs(t) do if k ~= "id" and k ~= "ok" then stage[k] = v end end
  stage.flops = workload.flops(w, p)
  stage.bytes = workload.bytes(w, p)
  local sec = stage.median_ms / 1e3
  stage.gflops = stage.flops / sec / 1e9
  stage.gbps = stage.bytes / sec / 1e9
  stage.rate = workload.rate(w, p, sec)
  -- After many timed launches, a fresh run on fresh inputs must still be
  -- right: catches results cached across launches and state that decays.
  s:reference(base, w, p, opts.recheck_seed or 7919)
  s:run(cand, w, p)
  s:check_canaries()
  local recheck = { pass = true }
  for _, c in ipairs(s:compare_outputs(w)) do
    if not c.pass then
      recheck = { pass = false, buffer = c.buffer, message = string.format("%s wrong after timing: %d elements off", c.buffer, c.bad_count) }
    end
  end
  stage.recheck = recheck
  if opts.ceilings then
    local under = bounds(stage, opts.ceilings, sec)
    if under then
      stage.verdict, stage.message = "suspicious", under
      return stage
    end
  end
  if not recheck.pass then
    stage.verdict, stage.message = "stale_after_timing", recheck.message
    return stage
  end
  stage.verdict = "ok"
  return stage
end

-- Metrics of the candidate's launches at params p, on freshly set-up buffers.
function M.metrics(s, cand, w, p, names)
  local steps = s:launches_at(cand, w, p)
  local m = s:call({ op = "metrics", sequence = steps, names = names }, 300)
  return { verdict = "ok", values = m.values, passes = m.passes }
end

return M
