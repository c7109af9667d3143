-- klineage: the skills the repository admits for the kernel (their
-- patterns match, their preconditions hold, their guards do not fire),
-- best expected gain times confidence first, each materialized by its
-- transform (then its template, then the LLM) and judged in turn; the
-- first the engine accepts is kept (correct and, where timed, faster
-- beyond noise). Copy this file to change a step, and run it with
-- `klineage optimize KERNEL.cu --workload SPEC --policy ./mine.lua`
-- (examples/policies/ has more; the contract is search/init.lua's).
return {
  name = "klineage",
  about = "skills admitted by their preconditions and guards, ranked by expected gain x confidence",
  direction = "forward",
  propose = function(state) return state:rank(state:skills()) end,
  choose = function(_, judged) return judged:first() end,
}
