-- Which of a transform's lineage sites, and which lineage versions, `make
-- test` checks on emu, and which it leaves to `make test-long` (ctest label
-- long). The rule is stable: it depends only on the lineage texts, never
-- on timing or chance. Together the two runs check every site and every
-- version, each once.
--
-- A transform's sites over every lineage and in one direction, in order
-- (workload name, lineage, source), form a list; the sample takes at most
-- PER of them, evenly spread with the first always in (and the last, when
-- PER is 2 or more). Adjacent versions and workloads share most of their
-- idioms, so the skipped sites are mostly the same loop or pointer again
-- in a neighbouring version: the long run checks them all the same. Per
-- lineage instead of per transform the sample was 169 sites and some ten
-- minutes of CPU; at PER = 2 the transforms alone took 290 CPU-s of
-- `make test`'s six minutes on two cores, at PER = 1 about half.
-- A lineage's versions are sampled the same way, VERSIONS of them: its v0
-- (the baseline every other version is judged against) and its last (the
-- expert kernel).
--
--   sample.PER, sample.VERSIONS
--   sample.pick(n [, per]) -> { [i] = true } the indices of 1..n sampled
--   sample.mode([var]) -> "sample" | "rest" | "all"   from the environment
--       variable var (default KL_SITES; unset: all)
--   sample.keep(mode, picked) -> whether a site in or out of the sample runs
local M = {}

M.PER = 1
M.VERSIONS = 2

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

function M.mode(var)
  var = var or "KL_SITES"
  local m = os.getenv(var) or "all"
  if not MODES[m] then error(var .. " must be sample, rest or all, not '" .. m .. "'", 0) end
  return m
end

function M.keep(mode, picked)
  if mode == "all" then return true end
  if mode == "sample" then return picked end
  return not picked
end

return M
