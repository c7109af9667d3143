-- The eval's table as text: one line per unit, the aggregate per policy
-- and the headline figures. `klineage eval` prints it; the Slurm merge
-- writes it to <eval folder>/table.txt, from the same results, so that a
-- cluster's eval reads as the local one does.
--
--   eval_table.text(results, rows [, unfinished]) -> text (ends in a newline)
--   eval_table.params_text(p) -> "B = 4096, G = 64" (the names sorted)
--     results: eval.unit's results in the eval's order; rows:
--     eval.aggregate(results); unfinished = { finished = n, of = m [, hint] }
--     adds the line that says the eval stopped before its end (hint: how
--     to go on; default: run the same command again)
local M = {}

local function x(v) return v and string.format("%.2fx", v) or "-" end
local function pct(v) return v and string.format("%.0f%%", 100 * v) or "-" end
local function num(v) return v and string.format("%.1f", v) or "-" end

-- "B = 4096, G = 64": a size, its names sorted. Unlike workload.params_text
-- it prints an integral number as an integer: a result read back from
-- JSON gives 64 as 64.0.
function M.params_text(p)
  local names, parts = {}, {}
  for k in pairs(p) do names[#names + 1] = k end
  table.sort(names)
  for _, k in ipairs(names) do parts[#parts + 1] = string.format("%s = %s", k, tostring(math.tointeger(p[k]) or p[k])) end
  return table.concat(parts, ", ")
end

local function seed_of(r) return r.seed and tostring(math.tointeger(r.seed) or r.seed) or "" end

local function unit_line(r)
  if r.not_run then
    return string.format("%-18s %-16s %4s  not run: %s", r.task, r.policy, seed_of(r), r.not_run)
  end
  local ci = r.ci and string.format("[%.2f, %.2f]", r.ci[1], r.ci[2]) or ""
  return string.format("%-18s %-16s %4s %5d %6d %8s %-14s %5s %6s %9s  %s", r.task, r.policy, seed_of(r), r.steps, r.cycles,
    x(r.speedup), ci, r.to90 and math.tointeger(r.to90) or r.to90 or "-", r.to90_best and math.tointeger(r.to90_best) or "-",
    r.recheck, r.stopped)
end
M.unit_line = unit_line

M.HEADER = string.format("%-18s %-16s %4s %5s %6s %8s %-14s %5s %6s %9s  %s", "task", "policy", "seed", "steps", "cycles",
  "speedup", "interval", "to90", "to90b", "recheck", "stopped")

-- How much of each policy's gain each family of kept steps brought: the
-- steps' measured speedups (each over the kernel it changed), their
-- geometric mean, and their share of the policy's summed log gains.
--   eval_table.families(results) -> { { policy, family, steps, geomean, share } }
function M.families(results)
  local by, total, out = {}, {}, {}
  for _, r in ipairs(results) do
    for _, g in ipairs(r.gains or {}) do
      local key = r.policy .. "\0" .. g.family
      by[key] = by[key] or { policy = r.policy, family = g.family, steps = 0, log = 0 }
      local e = by[key]
      e.steps, e.log = e.steps + 1, e.log + math.log(g.speedup)
      total[r.policy] = (total[r.policy] or 0) + math.max(0, math.log(g.speedup))
    end
  end
  for _, e in pairs(by) do
    e.geomean = math.exp(e.log / e.steps)
    e.share = (total[e.policy] or 0) > 0 and math.max(0, e.log) / total[e.policy] or 0
    out[#out + 1] = e
  end
  table.sort(out, function(a, b)
    if a.policy ~= b.policy then return a.policy < b.policy end
    if a.share ~= b.share then return a.share > b.share end
    return a.family < b.family
  end)
  for _, e in ipairs(out) do e.log = nil end
  return out
end

function M.text(results, rows, unfinished)
  local out = { M.HEADER }
  local function add(fmt, ...) out[#out + 1] = string.format(fmt, ...) end
  local said = {}
  for _, r in ipairs(results) do out[#out + 1] = unit_line(r) end
  for _, r in ipairs(results) do
    if r.timed_at and not said[r.task] then
      said[r.task] = true
      add("(%s is timed at %s, not at its params: %s)", r.task, M.params_text(r.timed_at.params), r.timed_at.why)
    end
  end
  out[#out + 1] = ""
  add("%-16s %5s %8s %7s %7s %6s %8s %6s %8s", "policy", "units", "geomean", "fast_1", "fast_2", "to90", "to90best", "wrong", "seconds")
  for _, r in ipairs(rows) do
    if r.not_run then
      add("%-16s %5d  not run: %s", r.policy, r.units, r.not_run)
    else
      add("%-16s %5d %8s %7s %7s %6s %8s %6d %8.0f", r.policy, r.units, x(r.geomean), pct(r.fast1), pct(r.fast2),
        num(r.to90), num(r.to90_best), r.wrong, r.seconds)
    end
  end
  out[#out + 1] = ""
  local families = M.families(results)
  if #families > 0 then
    add("%-16s %-18s %5s %10s %8s", "policy", "family (kept steps)", "steps", "geomean", "of gain")
    for _, f in ipairs(families) do
      add("%-16s %-18s %5d %10s %7.0f%%", f.policy, f.family, f.steps, x(f.geomean), 100 * f.share)
    end
    out[#out + 1] = ""
  end
  if unfinished then
    add("(%d of %d units are finished: %s)", unfinished.finished, unfinished.of, unfinished.hint or "run the same command again to go on")
  end
  local wrong = 0
  for _, r in ipairs(rows) do
    wrong = wrong + r.wrong
    if r.not_run then
      add("eval-%s-geomean: not run", r.policy)
    else
      add("eval-%s-geomean: %s x", r.policy, r.geomean and string.format("%.2f", r.geomean) or "-")
      add("eval-%s-cycles-to-90: %s cycles", r.policy, num(r.to90))
    end
  end
  add("eval-wrong-accepted: %d kernels", wrong)
  return table.concat(out, "\n") .. "\n"
end

return M
