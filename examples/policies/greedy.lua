-- greedy: the skills the repository admits, best expected gain first; the
-- first the engine accepts is kept. The whole contract: lua/klineage/search/init.lua.
--   klineage optimize examples/optimize/matmul.cu --workload examples/optimize/workload.lua --policy examples/policies/greedy.lua
return {
  name = "greedy-example", about = "the admitted skills, best first; the first accepted is kept",
  direction = "forward",
  propose = function(state) return state:rank(state:skills()) end,
  choose = function(_, judged) return judged:first() end,
}
