-- klineage_explore: the klineage policy's candidates (the admitted skills,
-- the schedules the model does not predict slower, then, where timed, the
-- skills held back by slowdowns), judged in rank order with no patience and
-- no width: the first accepted is kept, and the search goes on while the
-- budget lasts. Set beside klineage, it says what klineage's patience and
-- width cost or buy under the same budget.
local klineage = require "klineage.search.policies.klineage"

return {
  name = "klineage_explore",
  about = "klineage's ranked candidates, held-back skills last, judged with no patience: the first accepted kept",
  direction = "forward",
  propose = klineage.propose,
  choose = function(_, judged) return judged:first() end,
}
