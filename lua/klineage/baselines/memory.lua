-- The memory-based baseline: the past task most like this kernel
-- (baselines/memory_store.lua: source tokens and facts) is retrieved once,
-- from agent.memory (the observations the evaluation learns from), and its
-- transform sequence replayed in order, each transform at the first site
-- of the current kernel where it applies, with no preconditions and no
-- guards. A transform the gate refuses is passed over for the next one,
-- and the replay never goes back to it. With no memory the run is refused
-- (needs_memory): there is nothing to replay.
local rollout = require "klineage.baselines.rollout"
local store = require "klineage.baselines.memory_store"

local function retrieved(agent)
  if agent.retrieved == nil then
    local entry, score = store.retrieve(store.build(agent.memory), agent.reference.source, agent:facts())
    agent.retrieved = entry and { entry = entry, score = score } or false
  end
  return agent.retrieved or nil
end

return {
  name = "memory",
  about = "the most similar past task's transform sequence replayed, with no preconditions and no guards",
  needs_memory = true,
  candidates = function(agent)
    local r = retrieved(agent)
    if not r then return {} end
    -- The replay only moves forward: past the sequence's step each kept
    -- transform matched, so a refused step is passed over, never retried.
    local seq, at = r.entry.transforms, 0
    for _, s in ipairs(agent.steps) do
      for i = at + 1, #seq do
        if "transform:" .. seq[i] == s.skill then at = i break end
      end
    end
    local rows, offered = {}, {}
    for i = at + 1, #seq do
      local name = seq[i]
      if not offered[name] then
        offered[name] = true
        local sites = rollout.rows(agent, { name })
        if sites[1] then
          sites[1].order = i
          sites[1].because = { string.format("step %d of %d of %s's trajectory (walk %s, similarity %.2f)", i, #seq,
                                             r.entry.task, r.entry.walk, r.score) }
          rows[#rows + 1] = sites[1]
        end
      end
    end
    return rows
  end,
  rank = function(_, rows)
    table.sort(rows, function(a, b) return a.order < b.order end)
    return rows
  end,
  materialize = rollout.materialize,
  accept = rollout.accept,
}
