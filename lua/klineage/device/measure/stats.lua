-- Robust statistics for timing samples: medians, bootstrap confidence
-- intervals, noise, and the comparison of two candidates. Deterministic:
-- the bootstrap draws from a seeded generator, so a report regenerated
-- from the journal shows the same intervals.
local M = {}

local function sorted_copy(xs)
  local s = table.move(xs, 1, #xs, 1, {})
  table.sort(s)
  return s
end

-- Quantile q in [0, 1] of a sorted list, linear between order statistics.
function M.quantile_sorted(s, q)
  local n = #s
  assert(n > 0, "quantile of an empty sample")
  if n == 1 then return s[1] end
  local pos = 1 + (n - 1) * q
  local lo = math.floor(pos)
  local frac = pos - lo
  if lo >= n then return s[n] end
  return s[lo] + frac * (s[lo + 1] - s[lo])
end

function M.median(xs) return M.quantile_sorted(sorted_copy(xs), 0.5) end

function M.mean(xs)
  local sum = 0
  for _, x in ipairs(xs) do sum = sum + x end
  return sum / #xs
end

-- A small xorshift64* generator: reproducible resampling without touching
-- math.random's global state.
local function generator(seed)
  local state = (seed or 0x9E3779B97F4A7C15) | 1
  return function(n) -- uniform integer in [1, n]
    state = state ~ (state >> 12)
    state = state ~ (state << 25)
    state = state ~ (state >> 27)
    local x = (state * 0x2545F4914F6CDD1D) >> 11 -- 53 bits
    return 1 + x % n
  end
end
M.generator = generator

-- Percentile bootstrap interval of a statistic (default the median).
-- Returns lo, hi at the given confidence (default 0.95).
function M.bootstrap(xs, opts)
  opts = opts or {}
  local stat = opts.statistic or M.median
  local rounds = opts.rounds or 1000
  local conf = opts.confidence or 0.95
  local draw = generator(opts.seed)
  local n = #xs
  local est, sample = {}, {}
  for r = 1, rounds do
    for i = 1, n do sample[i] = xs[draw(n)] end
    est[r] = stat(sample)
  end
  table.sort(est)
  local tail = (1 - conf) / 2
  return M.quantile_sorted(est, tail), M.quantile_sorted(est, 1 - tail)
end

-- Summary of timing samples: median, 95% CI of the median, the relative
-- half-width of that interval ("noise"), min and max.
function M.summarize(xs, opts)
  assert(#xs > 0, "no samples")
  local s = sorted_copy(xs)
  local med = M.quantile_sorted(s, 0.5)
  local lo, hi = M.bootstrap(xs, opts)
  return {
    median = med, ci = { lo, hi }, n = #xs, min = s[1], max = s[#s],
    noise = med > 0 and (hi - lo) / 2 / med or math.huge,
  }
end

-- Compares candidate b against baseline a (samples are times: lower is
-- faster). speedup = median(a) / median(b), with a bootstrap interval of
-- that ratio. The difference counts only when the two medians' intervals
-- do not overlap: otherwise the outcome is "no_difference".
function M.compare(a, b, opts)
  opts = opts or {}
  local sa, sb = M.summarize(a, opts), M.summarize(b, opts)
  local draw = generator((opts.seed or 7) + 1)
  local rounds = opts.rounds or 1000
  local ratios, ra, rb = {}, {}, {}
  for r = 1, rounds do
    for i = 1, #a do ra[i] = a[draw(#a)] end
    for i = 1, #b do rb[i] = b[draw(#b)] end
    ratios[r] = M.median(ra) / M.median(rb)
  end
  table.sort(ratios)
  local overlap = sa.ci[1] <= sb.ci[2] and sb.ci[1] <= sa.ci[2]
  local outcome = overlap and "no_difference" or (sa.median > sb.median and "faster" or "slower")
  return {
    speedup = sa.median / sb.median,
    ci = { M.quantile_sorted(ratios, 0.025), M.quantile_sorted(ratios, 0.975) },
    outcome = outcome, a = sa, b = sb,
  }
end

return M
