-- greedy: judge every undo (and hunk revert) of the current kernel and
-- follow the accepted one that slows it most, so the most valuable
-- optimization comes off first. The gate's bench-size median is not
-- interleaved, so the slowest few are timed against the current kernel by
-- the compare, slowest first, and the first that measurably paid is
-- followed (the slowest when none did; the first where nothing is timed).
-- Every judged candidate not followed is journaled as evidence.
local COMPARED = 3 -- compares per step at most
return {
  name = "greedy",
  about = "follow the accepted simplification with the largest measured slowdown",
  direction = "backward",
  propose = function(state)
    local candidates = state:propose({ "undo", "hunks", "llm" })
    if #candidates == 0 then return nil, "no transform has an undo site left" end
    return candidates
  end,
  choose = function(state, judged)
    local all, accepted, order = judged:all(), {}, {}
    for i, r in ipairs(all) do
      order[r] = i
      if r.accepted then accepted[#accepted + 1] = r end
    end
    table.sort(accepted, function(a, b)
      if (a.median_ms or 0) ~= (b.median_ms or 0) then return (a.median_ms or 0) > (b.median_ms or 0) end
      return order[a] < order[b]
    end)
    local best = accepted[1]
    for i = 1, math.min(COMPARED, #accepted) do
      local e = state:measure(accepted[i])
      if not e.measured or e.outcome == "faster" then best = accepted[i] break end
    end
    for _, r in ipairs(all) do
      if r ~= best then state:evidence(r) end
    end
    if not best then return nil, "the gate refused every candidate" end
    return best
  end,
}
