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
  step = function(walk)
    local candidates = walk:propose({ "undo", "hunks", "recorded", "llm" })
    if #candidates == 0 then return nil, "no candidate left" end
    local best
    for _, r in ipairs(walk:judge(candidates, { effect = true })) do
      walk:evidence(r)
      if r.accepted and (not best or paid(r) > paid(best)) then best = r end
    end
    if not best then return nil, "the gate refused every candidate" end
    return best
  end,
}
