-- beam-2: two kernels on the frontier. Each step proposes the admitted
-- skills at both, judges every candidate, and keeps the two accepted ones
-- fastest over the input (result.speedup, measured where the backend times
-- kernels; where it does not, the first two accepted). What choose returns
-- is the next frontier.
--   klineage optimize examples/optimize/matmul.cu --workload examples/optimize/workload.lua --policy examples/policies/beam2.lua
local WIDTH = 2

return {
  name = "beam-2",
  about = "the admitted skills at both kernels of the frontier, the two fastest accepted kept",
  direction = "forward",
  propose = function(state)
    local rows = {}
    for _, node in ipairs(state.frontier) do
      for _, row in ipairs(state:rank(state:skills({ node = node }))) do rows[#rows + 1] = row end
    end
    return rows
  end,
  choose = function(_, judged)
    local kept, at = {}, {}
    for i, r in ipairs(judged:all()) do
      if r.accepted then kept[#kept + 1], at[r] = r, i end
    end
    table.sort(kept, function(a, b)
      if (a.speedup or 1) ~= (b.speedup or 1) then return (a.speedup or 1) > (b.speedup or 1) end
      return at[a] < at[b]
    end)
    return table.unpack(kept, 1, math.min(WIDTH, #kept))
  end,
}
