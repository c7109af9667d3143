-- breadth: judge every candidate at each step, time every accepted one
-- against the current kernel by the interleaved compare, journal them all
-- as evidence, and follow the one whose optimization paid most. It costs
-- one compare per accepted candidate more than greedy; the skills learn
-- from the evidence of the steps not taken as well.
local function paid(r)
  local e = r.effect
  return e and e.measured and e.speedup or 0
end

return {
  name = "breadth",
  about = "judge and time every candidate, keep all as evidence, follow the best",
  direction = "backward",
  propose = function(state) return state:propose({ "undo", "hunks", "recorded", "llm" }) end,
  choose = function(state, judged)
    local best
    for _, r in ipairs(judged:all({ effect = true })) do
      state:evidence(r)
      if r.accepted and (not best or paid(r) > paid(best)) then best = r end
    end
    if not best then return nil, "the gate refused every candidate" end
    return best
  end,
}
