-- klineage: the skills the repository admits for the kernel (their
-- patterns match, their preconditions hold, their guards do not fire) and,
-- when the kernel lifts to the kernel IR, the static model's best
-- schedules, one list ranked by expected gain: a skill's measured median
-- speedup times its confidence, a schedule's predicted speedup at the
-- model's (low) confidence. Each is materialized (a skill by its
-- transform, then its template, then the LLM; a schedule by kir) and
-- judged in turn until the engine accepts one (correct and, where timed,
-- faster beyond noise; on emu a schedule only on a predicted 1.5x). Where
-- kernels are timed, the WIDTH - 1 next are judged too and the fastest
-- accepted is kept, so that a parameter the model cannot tell apart (a
-- warp or a block a row) is measured.
-- Copy this file to change a step, and run it with
-- `klineage optimize KERNEL.cu --workload SPEC --policy ./mine.lua`
-- (examples/policies/ has more; the contract is search/init.lua's).
local SCHEDULES = 40 -- the model's schedules ranked beside the skills (all that kir offers)
local WIDTH = 3      -- timed: candidates judged from the first accepted one on

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
  choose = function(_, judged)
    local best, first
    for i, r in ipairs(judged) do
      if r.accepted and (not best or (r.effect.measured and r.effect.speedup > best.effect.speedup)) then best = r end
      first = first or (r.accepted and i)
      if best and (i >= first + WIDTH - 1 or not best.effect.measured) then break end
    end
    return best
  end,
}
