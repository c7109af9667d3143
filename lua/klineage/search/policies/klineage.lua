-- klineage: the skills the repository admits for the kernel (their
-- patterns match, their preconditions hold, their guards do not fire) and,
-- when the kernel lifts to the kernel IR, the static model's best
-- schedules, one list ranked by expected gain: a skill's measured median
-- speedup times its confidence, a schedule's predicted speedup at the
-- model's (low) confidence. Each is materialized (a skill by its
-- transform, then its template, then the LLM; a schedule by kir) and
-- judged in turn; the first the engine accepts is kept (correct and, where
-- timed, faster beyond noise; on emu a schedule only on a predicted 1.5x).
-- Copy this file to change a step, and run it with
-- `klineage optimize KERNEL.cu --workload SPEC --policy ./mine.lua`
-- (examples/policies/ has more; the contract is search/init.lua's).
local SCHEDULES = 6 -- the model's top schedules ranked beside the skills

return {
  name = "klineage",
  about = "skills admitted by their preconditions and guards and the best predicted schedules, ranked by expected gain",
  direction = "forward",
  propose = function(state)
    local rows = state:skills()
    for i, r in ipairs(state:schedules()) do
      if i > SCHEDULES then break end
      rows[#rows + 1] = r
    end
    return state:rank(rows)
  end,
  choose = function(_, judged) return judged:first() end,
}
