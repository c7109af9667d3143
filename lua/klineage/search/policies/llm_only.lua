-- The llm-only baseline: the LLM asked to make the kernel faster, with no
-- skill, its facts in the prompt (llm/prompts/optimize.md), up to
-- ATTEMPTS answers a step, each one charged cycle and each usable answer
-- one more to gate. It needs a provider (--llm): without one the run is
-- refused before any cycle (llm_unavailable), and eval says "not run: no
-- provider".
local ATTEMPTS = 3

return {
  name = "llm-only",
  about = "the LLM asked to optimize the kernel directly, without skills",
  direction = "forward",
  needs = { "llm" },
  propose = function()
    local rows = {}
    for i = 1, ATTEMPTS do
      rows[i] = { skill = "llm:optimize", site = "attempt " .. i, params_key = "{}", ask = { attempt = i } }
    end
    return rows
  end,
  choose = function(_, judged) return judged:first() end,
}
