-- The memory-based baseline: the past task most like the input kernel
-- (search/memory_store.lua: source tokens and facts) is retrieved once,
-- from state.memory (the observations the evaluation learns from), and
-- its transform sequence replayed in order, each transform at the first
-- site of the current kernel where it applies, with no preconditions and
-- no guards. A transform the gate refuses is passed over for the next
-- one, and the replay never goes back to it.
local store = require "klineage.search.memory_store"

return {
  name = "memory",
  about = "the most similar past task's transform sequence replayed, with no preconditions and no guards",
  direction = "forward",
  needs = { "memory" },
  propose = function(state)
    if state.recalled == nil then
      local entry, score = store.retrieve(store.build(state.memory), state.input.source, state:facts(state.input))
      state.recalled = entry and { entry = entry, score = score } or false
    end
    local r, kept, rows = state.recalled, {}, {}
    if not r then return rows end
    for _, s in ipairs(state.steps) do kept[#kept + 1] = s.skill:match("^transform:(.*)$") end
    for _, t in ipairs(store.ahead(r.entry, kept)) do
      local row = state:transforms({ names = { t.name } })[1]
      if row then
        row.because = { string.format("step %d of %d of %s's trajectory (walk %s, similarity %.2f)", t.index,
                                      #r.entry.transforms, r.entry.task, r.entry.walk, r.score) }
        rows[#rows + 1] = row
      end
    end
    return rows
  end,
  choose = function(_, judged) return judged:first() end,
}
