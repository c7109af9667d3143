-- greedy: judge every single undo (and hunk revert) of the current kernel,
-- and follow the accepted one that slows it most, so the most valuable
-- optimization comes off first. The ranking is by the gate's bench-size
-- median; the step taken is then timed against the current kernel by the
-- interleaved compare. Without timings (emu) it follows the first accepted
-- candidate in proposal order, and the effect says "not measured".
return {
  name = "greedy",
  about = "follow the accepted simplification with the largest slowdown",
  step = function(walk)
    local candidates = walk:propose({ "undo", "hunks" })
    if #candidates == 0 then return nil, "no transform has an undo site left" end
    local best
    for _, r in ipairs(walk:judge(candidates)) do
      if r.accepted and (not best or (r.median_ms or 0) > (best.median_ms or 0)) then best = r end
    end
    if not best then return nil, "the gate refused every candidate" end
    walk:measure(best)
    return best
  end,
}
