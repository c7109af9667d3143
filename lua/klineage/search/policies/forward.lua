-- The forward rollout baseline: at each step every applicable transform,
-- at every site, with its default parameters, and the static model's best
-- schedules are judged, and the fastest accepted one is kept. No skills,
-- no preconditions, no guards: what transforms and schedules alone buy
-- under the same gate and budget.
local SCHEDULES = 3

return {
  name = "forward",
  about = "every applicable transform and the best predicted schedules judged at each step, the fastest kept; no preconditions, no guards",
  direction = "forward",
  propose = function(state)
    local rows = state:in_order(state:transforms())
    for i, r in ipairs(state:schedules()) do
      if i > SCHEDULES then break end
      rows[#rows + 1] = r
    end
    return rows
  end,
  choose = function(_, judged) return judged:fastest() end,
}
