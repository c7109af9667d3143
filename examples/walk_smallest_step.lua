-- A walk policy of your own: peel off the optimization whose undo changes
-- the fewest lines first, so each recorded step is as small as possible.
--
--   klineage walk reduction --policy examples/walk_smallest_step.lua --backend emu
--
-- A policy is a table with a name and step(walk), which returns the judged
-- result to follow, or nil and why the walk stops. walk:propose(names)
-- gives candidates ("undo", "recorded", "hunks"); walk:judge(candidates)
-- runs each through the gate; walk:measure(result) times a result against
-- the current kernel (on cuda). The whole contract: lua/klineage/walk/init.lua.
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
  step = function(walk)
    local candidates = walk:propose({ "undo" })
    if #candidates == 0 then return nil, "no undo site left" end
    table.sort(candidates, function(x, y)
      local dx, dy = lines_changed(walk.current.source, x.source), lines_changed(walk.current.source, y.source)
      if dx ~= dy then return dx < dy end
      return x.label < y.label -- a fixed order, so that a resumed walk takes the same steps
    end)
    for _, c in ipairs(candidates) do -- one at a time: the first accepted one ends the step
      local result = walk:judge({ c })[1]
      if result.accepted then walk:measure(result); return result end
    end
    return nil, "the gate refused every undo"
  end,
}
