-- Which of a transform's lineage sites `make test` checks, and which it
-- leaves to `make test-long` (ctest label long). The rule is stable: it
-- depends only on the lineage texts, never on timing or chance.
--
-- A transform's sites over every lineage and in one direction, in order
-- (workload name, lineage, source), form a list; the sample takes at most
-- PER of them, evenly spread with the first and the last always in: for a
-- transform found in several workloads, the first and the last of them.
-- Adjacent versions and workloads share most of their idioms, so the
-- skipped sites are mostly the same loop or pointer again in a
-- neighbouring version: the long run checks them all the same. Per
-- lineage instead of per transform the sample was 169 sites and some ten
-- minutes of CPU, more than `make test`'s six minutes on two cores.
--
--   sample.PER
--   sample.pick(n [, per]) -> { [i] = true } the indices of 1..n sampled
--   sample.mode() -> "sample" | "rest" | "all"   from KL_SITES (default all)
--   sample.keep(mode, picked) -> whether a site in or out of the sample runs
local M = {}

M.PER = 2

function M.pick(n, per)
  per = per or M.PER
  local out = {}
  if n <= per then
    for i = 1, n do out[i] = true end
  elseif per == 1 then
    out[1] = true
  else
    for k = 0, per - 1 do out[1 + (k * (n - 1)) // (per - 1)] = true end
  end
  return out
end

local MODES = { sample = true, rest = true, all = true }

function M.mode()
  local m = os.getenv("KL_SITES") or "all"
  if not MODES[m] then error("KL_SITES must be sample, rest or all, not '" .. m .. "'", 0) end
  return m
end

function M.keep(mode, picked)
  if mode == "all" then return true end
  if mode == "sample" then return picked end
  return not picked
end

return M
