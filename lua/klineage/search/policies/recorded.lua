-- recorded: follow the expert's own history backward, vN -> vN-1 -> ... -> v0,
-- validating each version with the gate, measuring what the step paid,
-- and explaining it by the transforms whose undo reproduces it.
return {
  name = "recorded",
  about = "the expert's history backward, each step validated, measured and explained by transforms",
  direction = "backward",
  propose = function(state)
    local candidates = state:propose({ "recorded" })
    if #candidates == 0 then return nil, "reached the lineage's first version" end
    return candidates
  end,
  choose = function(state, judged)
    local result = judged[1]
    if not result then return nil end -- the budget ran out
    if not result.accepted then return nil, "the gate refused " .. result.candidate.label .. ": " .. result.verdict end
    state:measure(result)
    state:explain(result)
    return result
  end,
}
