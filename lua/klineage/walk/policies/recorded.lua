-- recorded: follow the expert's own history backward, vN -> vN-1 -> ... -> v0,
-- validating each version with the gate, measuring what the step paid,
-- and explaining it by the transforms whose undo reproduces it.
return {
  name = "recorded",
  about = "the expert's history backward, each step validated, measured and explained by transforms",
  step = function(walk)
    local candidates = walk:propose({ "recorded" })
    if #candidates == 0 then return nil, "reached the lineage's first version" end
    local result = walk:judge(candidates)[1]
    if not result.accepted then return nil, "the gate refused " .. result.candidate.label .. ": " .. result.verdict end
    walk:measure(result)
    walk:explain(result)
    return result
  end,
}
