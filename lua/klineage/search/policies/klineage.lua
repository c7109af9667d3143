-- klineage: the skills the repository admits (patterns match, preconditions
-- hold, guards do not fire) and kir's schedules of the kernel (after a
-- schedule step: its extensions and its neighbours) that the static model
-- does not predict slower than the kernel now, one list ranked by
-- expected gain: a skill's measured median times its confidence, a
-- schedule's predicted speedup at the model's low confidence. Candidates
-- are judged in turn until the engine accepts one (correct and, where
-- timed, faster beyond noise than the kernel the search is at). Where timed,
-- the WIDTH - 1 next are judged too and the fastest kept, so that what the
-- model cannot tell apart (a warp or a block a row) is measured. After
-- PATIENCE candidates with none accepted, the step turns to the skills held
-- back by conditions learned only from slowdowns, or never seen to help
-- (where timed: the compare can overrule such a prediction, never a wrong
-- result), one cycle each while the budget lasts; none accepted ends the
-- search. On the H100's
-- held-out suite the best few ranked rows held every schedule kept, and
-- the held-back decorations paid after them (launch_bounds 1.86x after
-- attention's register tile, restrict 1.16x after embedding's coarsen).
-- Copy this file to change a step:
-- `klineage optimize K.cu --workload SPEC --policy ./mine.lua` (search/init.lua).
local SCHEDULES = 40 -- the model's schedules ranked beside the skills
local WIDTH = 3      -- timed: candidates judged from the first accepted one on
local PATIENCE = 8   -- ranked candidates judged (a cycle each) with none accepted

return {
  name = "klineage",
  about = "skills admitted by their preconditions and guards and the best predicted schedules, ranked by expected gain; "
    .. "then, where timed, the skills held back by slowdowns",
  direction = "forward",
  propose = function(state)
    local rows, taken = state:skills({ held_back = state.timed }), 0
    for _, r in ipairs(state:schedules()) do
      if taken >= SCHEDULES then break end
      -- one the model predicts slower than the kernel the search is at is
      -- not judged: on the H200 tune part such rows took half the cycles
      -- and none was faster, while the skills ranked after them waited
      if not (r.predicted and r.predicted.speedup < 1) then
        rows[#rows + 1], taken = r, taken + 1
      end
    end
    return state:rank(rows) -- held-back rows last
  end,
  choose = function(_, judged)
    local best, first, spent, held = nil, nil, 0, false
    for i = 1, #judged do
      local held_back = judged.candidates[i].held_back
      if held_back and best then break end
      -- ranked rows while the patience lasts (or WIDTH from the first
      -- accepted one); then only the held-back rows, which rank last
      if held_back or first or spent < PATIENCE then
        local r = judged[i]
        if not r then break end -- the budget is spent
        held = held or held_back ~= nil
        if r.verdict ~= "skipped" then spent = spent + 1 end -- a skipped row cost no cycle
        if r.accepted and (not best or (r.effect.measured and r.effect.speedup > best.effect.speedup)) then best = r end
        first = first or (r.accepted and i)
        if best and (held_back or i >= first + WIDTH - 1 or not best.effect.measured) then break end
      end
    end
    if best then return best end
    return nil, string.format("none of the %d best ranked candidates%s was accepted", PATIENCE,
                              held and ", nor a skill held back," or "")
  end,
}
