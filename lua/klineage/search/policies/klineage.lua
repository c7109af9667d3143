-- klineage: the skills the repository admits (patterns match, preconditions
-- hold, guards do not fire) and kir's schedules of the kernel (after a
-- schedule step: its extensions and its neighbours) that the static model
-- does not predict slower than the kernel now, one list ranked by
-- expected gain: a skill's measured median times its confidence, a
-- schedule's predicted speedup at the model's low confidence. Candidates
-- are judged in turn until the engine accepts one (correct and, where
-- timed, faster beyond noise than the kernel the search is at). Where timed,
-- the WIDTH - 1 next are judged too and the fastest kept, so that what the
-- model cannot tell apart (a warp or a block a row) is measured. A step
-- that judges PATIENCE candidates with none accepted ends the search: past
-- the model's best few, cycles buy little. Copy this file to change a step:
-- `klineage optimize K.cu --workload SPEC --policy ./mine.lua` (search/init.lua).
local SCHEDULES = 40 -- the model's schedules ranked beside the skills
local WIDTH = 3      -- timed: candidates judged from the first accepted one on
local PATIENCE = 8   -- candidates judged (a cycle each) with none accepted

return {
  name = "klineage",
  about = "skills admitted by their preconditions and guards and the best predicted schedules, ranked by expected gain",
  direction = "forward",
  propose = function(state)
    local rows, taken = state:skills(), 0
    for _, r in ipairs(state:schedules()) do
      if taken >= SCHEDULES then break end
      -- one the model predicts slower than the kernel the search is at is
      -- not judged: on the H200 tune part such rows took half the cycles
      -- and none was faster, while the skills ranked after them waited
      if not (r.predicted and r.predicted.speedup < 1) then
        rows[#rows + 1], taken = r, taken + 1
      end
    end
    return state:rank(rows)
  end,
  choose = function(_, judged)
    local best, first, spent = nil, nil, 0
    for i, r in ipairs(judged) do
      if r.verdict ~= "skipped" then spent = spent + 1 end -- a skipped row cost no cycle
      if r.accepted and (not best or (r.effect.measured and r.effect.speedup > best.effect.speedup)) then best = r end
      first = first or (r.accepted and i)
      if best and (i >= first + WIDTH - 1 or not best.effect.measured) then break end
      if not first and spent >= PATIENCE then return nil, "none of the " .. PATIENCE .. " best ranked candidates was accepted" end
    end
    return best
  end,
}
