-- schedule: kir's legal schedules of the kernel, the best predicted one
-- and its parameter neighbours (the same primitives, other block, tile or
-- coarsen sizes) up to POINTS; successive halving (search/halving.lua)
-- screens them with the static model, judges the better half, and keeps
-- the fastest accepted (on emu, the best predicted of those accepted).
local halving = require "klineage.search.halving"
local POINTS = 8

local function skeleton(row) return (row.schedule:gsub("%b()", "")) end

return {
  name = "schedule",
  about = "the best predicted kir schedule and its parameter neighbours, successively halved: the model screens, the gate judges half",
  direction = "forward",
  propose = function(state)
    local rows, points = state:schedules(), {}
    local best = rows[1]
    for _, r in ipairs(rows) do
      if #points < POINTS and skeleton(r) == skeleton(best) then points[#points + 1] = r end
    end
    for _, r in ipairs(rows) do
      if #points < POINTS and skeleton(r) ~= skeleton(best) then points[#points + 1] = r end
    end
    return points
  end,
  choose = function(_, judged)
    local index = {}
    for i = 1, #judged do index[i] = i end
    local best = halving.run(index, {
      function(i) return judged.candidates[i].predicted.speedup end,
      function(i)
        local r = judged[i]
        if not (r and r.accepted) then return nil end
        return r.effect.measured and r.effect.speedup or r.candidate.predicted.speedup
      end })
    return best and judged[best] and judged[best].accepted and judged[best] or nil
  end,
}
