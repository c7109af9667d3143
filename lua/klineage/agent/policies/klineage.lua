-- The klineage policy: the skills the repository admits for the kernel,
-- best expected gain times confidence first, each materialized by its
-- transform (then its template, then the LLM), gated, and kept only when
-- correct and, on cuda, faster beyond noise. Copy this file to change a
-- step: any of candidates, rank, materialize, accept may be replaced
-- (agent/steps.lua has the defaults and their contract), e.g.
--
--   local steps = require "klineage.agent.steps"
--   return { name = "cheapest-first", rank = function(agent, rows)
--     table.sort(rows, function(a, b) return a.skill < b.skill end)
--     return rows
--   end }
--
-- and run it with `klineage optimize KERNEL.cu --workload SPEC --policy ./mine.lua`.
local steps = require "klineage.agent.steps"

return {
  name = "klineage",
  about = "skills admitted by their preconditions and guards, ranked by expected gain x confidence",
  candidates = steps.candidates,
  rank = steps.rank,
  materialize = steps.materialize,
  accept = steps.accept,
}
