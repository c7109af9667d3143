-- epsilon-greedy: greedy, but with probability EPSILON a step first tries
-- an admitted skill drawn at random, so a skill whose recorded gain is low
-- still gets its chance. The draws follow the run's seed (state:random),
-- so the policy is seeded: klineage eval runs it once per seed (--seeds N).
--   klineage eval examples/suites/held-out --policies examples/policies/epsilon_greedy.lua --seeds 2
local EPSILON = 0.2

return {
  name = "epsilon-greedy",
  about = "the admitted skills best first, but with probability EPSILON a random one first",
  direction = "forward",
  seeded = true,
  propose = function(state)
    local rows = state:rank(state:skills())
    if #rows > 1 and state:random(100) <= EPSILON * 100 then
      table.insert(rows, 1, table.remove(rows, state:random(#rows)))
    end
    return rows
  end,
  choose = function(_, judged) return judged:first() end,
}
