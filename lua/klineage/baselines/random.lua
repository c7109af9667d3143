-- The random baseline: one applicable transform at a time, chosen at
-- random (the next one when the gate refuses it), from the run's seed
-- (agent.seed, journaled with the run: the same seed makes the same
-- choices, so a resumed run reuses its journal). The generator is
-- xorshift32, written here so that the choices do not depend on the Lua
-- build's math.random.
local rollout = require "klineage.baselines.rollout"

local function next_state(x)
  x = x ~ ((x << 13) & 0xffffffff)
  x = x ~ (x >> 17)
  x = x ~ ((x << 5) & 0xffffffff)
  return x
end

return {
  name = "random",
  about = "one applicable transform at a time, chosen at random with a recorded seed",
  candidates = function(agent) return rollout.rows(agent) end,
  rank = function(agent, rows)
    rollout.in_order(agent, rows) -- a fixed order first, so that the shuffle depends on the seed alone
    agent.random_state = agent.random_state or ((agent.seed or 1) * 2654435761 % 0xffffffff + 1)
    for i = #rows, 2, -1 do
      agent.random_state = next_state(agent.random_state)
      local j = agent.random_state % i + 1
      rows[i], rows[j] = rows[j], rows[i]
    end
    for i, row in ipairs(rows) do
      row.because = { string.format("drawn %d of %d at random (seed %d)", i, #rows, agent.seed or 1) }
    end
    return rows
  end,
  materialize = rollout.materialize,
  accept = rollout.accept,
}
