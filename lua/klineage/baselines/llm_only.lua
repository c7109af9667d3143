-- The llm-only baseline: the LLM asked to make the kernel faster, with no
-- skill, its facts in the prompt (llm/prompts/optimize.md), up to
-- ATTEMPTS answers per step, each one gate cycle (an answer with no usable
-- kernel too). It needs a provider (--llm): without one the run fails at
-- once with llm_unavailable, and the evaluation says "not run: no provider".
local rollout = require "klineage.baselines.rollout"

local ATTEMPTS = 3

return {
  name = "llm-only",
  about = "the LLM asked to optimize the kernel directly, without skills",
  needs_llm = true,
  candidates = function(agent)
    local rows = {}
    for i = 1, ATTEMPTS do
      rows[i] = { skill = "llm:optimize", site = "attempt " .. i, attempt = i, params_key = "{}" }
    end
    return rows
  end,
  rank = function(_, rows) return rows end,
  materialize = function(agent, row)
    local text, f = agent.llm({ kernel = agent.current.source, workload = agent.workload, facts = agent:facts(),
                                attempt = row.attempt })
    if text then return { source = text, by = "llm", llm = f } end
    return nil, "the LLM gave no usable kernel: " .. tostring(type(f) == "table" and f.message or f),
      { llm = type(f) == "table" and f.record or nil, verdict = type(f) == "table" and f.verdict or nil }
  end,
  accept = rollout.accept,
}
