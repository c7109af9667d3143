-- A walk policy of your own: peel off the optimization whose undo changes
-- the fewest lines first, so each recorded step is as small as possible.
--
--   klineage walk reduction --policy examples/policies/smallest_step.lua --backend emu
--
-- A backward policy proposes simplifications of the kernel the walk is at
-- (state:propose: "undo", "recorded", "hunks", "llm") and chooses the one
-- to follow from `judged`, which the gate fills as choose reads it. The
-- whole contract: lua/klineage/search/init.lua and search/backward.lua.
local function lines_changed(a, b)
  local count, seen = 0, {}
  for line in a:gmatch("[^\n]+") do seen[line] = (seen[line] or 0) + 1 end
  for line in b:gmatch("[^\n]+") do
    if (seen[line] or 0) > 0 then seen[line] = seen[line] - 1 else count = count + 1 end
  end
  return count
end

return {
  name = "smallest-step",
  about = "follow the accepted undo that changes the fewest lines",
  direction = "backward",
  propose = function(state)
    local candidates = state:propose({ "undo" })
    if #candidates == 0 then return nil, "no undo site left" end
    local cur = state.current.source
    table.sort(candidates, function(x, y)
      local dx, dy = lines_changed(cur, x.source), lines_changed(cur, y.source)
      if dx ~= dy then return dx < dy end
      return x.label < y.label -- a fixed order, so that a resumed walk takes the same steps
    end)
    return candidates
  end,
  choose = function(state, judged)
    local result = judged:first() -- one at a time: the first accepted one ends the step
    if not result then return nil, "the gate refused every undo" end
    state:measure(result)
    return result
  end,
}
