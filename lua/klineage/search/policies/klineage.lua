-- klineage: the skills the repository admits for the kernel (their
-- patterns match, their preconditions hold, their guards do not fire),
-- best expected gain times confidence first, each materialized by its
-- transform (then its template, then the LLM) and judged in turn; then
-- the static model's best schedules of the kernel (kir). The first the
-- engine accepts is kept (correct and, where timed, faster beyond noise).
-- Copy this file to change a step, and run it with
-- `klineage optimize KERNEL.cu --workload SPEC --policy ./mine.lua`
-- (examples/policies/ has more; the contract is search/init.lua's).
local SCHEDULES = 3 -- the model's top schedules tried after the skills

return {
  name = "klineage",
  about = "skills admitted by their preconditions and guards, ranked by expected gain x confidence; then the best predicted schedules",
  direction = "forward",
  propose = function(state)
    local rows = state:rank(state:skills())
    for i, r in ipairs(state:schedules()) do
      if i > SCHEDULES then break end
      rows[#rows + 1] = r
    end
    return rows
  end,
  choose = function(_, judged) return judged:first() end,
}
