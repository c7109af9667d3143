-- klineage: the skills the repository admits for the kernel (their
-- patterns match, their preconditions hold, their guards do not fire) and
-- the static model's best schedules of the kernel (kir), one list ordered
-- by expected gain: a skill's median measured gain above 1 times its
-- confidence, a schedule's predicted gain above 1. Each is materialized
-- and judged in turn; the first the engine accepts is kept (correct and,
-- where timed, faster beyond noise).
-- Copy this file to change a step, and run it with
-- `klineage optimize KERNEL.cu --workload SPEC --policy ./mine.lua`
-- (examples/policies/ has more; the contract is search/init.lua's).
local SCHEDULES = 6 -- the model's best schedules weighed against the skills

local function gain(row)
  if row.predicted then return row.predicted.speedup - 1 end
  return row.score or 0
end

return {
  name = "klineage",
  about = "skills admitted by their preconditions and guards and the best predicted schedules, by expected gain",
  direction = "forward",
  propose = function(state)
    local rows, merged = state:rank(state:skills()), {}
    local schedules = { table.unpack(state:schedules(), 1, SCHEDULES) }
    local i, j = 1, 1
    while rows[i] or schedules[j] do
      local take_schedule = schedules[j] and (not rows[i] or gain(schedules[j]) > gain(rows[i]))
      merged[#merged + 1] = take_schedule and schedules[j] or rows[i]
      if take_schedule then j = j + 1 else i = i + 1 end
    end
    return merged
  end,
  choose = function(_, judged) return judged:first() end,
}
