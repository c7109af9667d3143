-- Adaptive sampling of a timed run, after nvbench: warm up, then take
-- samples until the median's confidence interval is tight enough (relative
-- half-width under `noise`, default 1%) or a cap on samples or seconds is
-- reached. The timer is injected, so the policy is tested without a GPU.
--
--   sampler.run{
--     sample = function() return ns, info end,   -- one timed run (L2 already flushed by it)
--     warmup = 3, min_samples = 10, max_samples = 1000,
--     max_seconds = 2.0, noise = 0.01, clock = host.clock,
--     check_every = 5,                          -- re-evaluate the interval every k samples
--   } -> { median, ci, n, noise, min, max, converged, reason, samples = {...}, infos = {...} }
local stats = require "klineage.device.measure.stats"

local M = {}

M.defaults = { warmup = 3, min_samples = 10, max_samples = 1000, max_seconds = 2.0, noise = 0.01, check_every = 5 }

function M.run(opts)
  local o = setmetatable({}, { __index = function(_, k) local v = opts[k]; if v == nil then return M.defaults[k] end; return v end })
  assert(type(opts.sample) == "function", "sampler.run: sample must be a function")
  local clock = opts.clock or require("kl.host").clock
  for _ = 1, o.warmup do opts.sample() end
  local samples, infos = {}, {}
  local start = clock()
  local summary, reason
  while true do
    local ns, info = opts.sample()
    if type(ns) ~= "number" or ns ~= ns or ns <= 0 then
      error(string.format("sampler: a sample must be a positive number of ns, got %s", tostring(ns)), 0)
    end
    samples[#samples + 1] = ns
    infos[#infos + 1] = info
    local n = #samples
    if n >= o.min_samples and (n - o.min_samples) % o.check_every == 0 then
      summary = stats.summarize(samples, { rounds = 400 })
      if summary.noise <= o.noise then reason = "converged" break end
    end
    if n >= o.max_samples then reason = "sample cap" break end
    if clock() - start >= o.max_seconds and n >= math.min(o.min_samples, 3) then reason = "time cap" break end
  end
  summary = stats.summarize(samples)
  summary.converged = summary.noise <= o.noise
  summary.reason = reason
  summary.samples = samples
  summary.infos = infos
  return summary
end

return M
