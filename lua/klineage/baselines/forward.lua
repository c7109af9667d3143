-- The forward rollout baseline: at each step every applicable transform,
-- at every site, with its default parameters, is judged, and the fastest
-- accepted one is kept (keep = "best"). No skills, no preconditions, no
-- guards: what the transforms alone buy under the same gate and budget.
local rollout = require "klineage.baselines.rollout"

return {
  name = "forward",
  about = "every applicable transform judged at each step, the fastest kept; no preconditions, no guards",
  keep = "best",
  candidates = function(agent) return rollout.rows(agent) end,
  rank = rollout.in_order,
  materialize = rollout.materialize,
  accept = rollout.accept,
}
