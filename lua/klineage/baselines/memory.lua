-- The memory-based baseline: the past task most like this kernel
-- (baselines/memory_store.lua: source tokens and facts) is retrieved once,
-- from agent.memory (the observations the evaluation learns from), and its
-- transform sequence replayed in order, each transform at the first site
-- of the current kernel where it applies, with no preconditions and no
-- guards. A transform the gate refuses is passed over for the next one.
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
  candidates = function(agent)
    local r = retrieved(agent)
    if not r then return {} end
    -- The replay's position: the sequence's transforms not yet kept, in order.
    local kept, rows, offered = {}, {}, {}
    for _, s in ipairs(agent.steps) do kept[s.skill] = (kept[s.skill] or 0) + 1 end
    for i, name in ipairs(r.entry.transforms) do
      local key = "transform:" .. name
      if (kept[key] or 0) > 0 then
        kept[key] = kept[key] - 1
      elseif not offered[name] then
        offered[name] = true
        local sites = rollout.rows(agent, { name })
        if sites[1] then
          sites[1].order = i
          sites[1].because = { string.format("step %d of %s's trajectory (similarity %.2f)", i, r.entry.task, r.score) }
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
