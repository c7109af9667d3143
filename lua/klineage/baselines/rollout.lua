-- What the skill-free baselines share: every transform site of the
-- current kernel as a row (no precondition, no guard: that is the point of
-- a baseline), materialized by its transform with the default parameters,
-- and kept when the gate passes it and, on cuda, the compare finds it
-- faster beyond noise. On a backend that times nothing (emu) a correct
-- change is kept: a baseline has no measured evidence to lean on, and
-- the evaluation on emu measures correctness only.
--
--   rollout.rows(agent [, names]) -> rows { skill = "transform:NAME",
--       transform, site (its key), params_key, applies (the site) }
--   rollout.in_order(agent, rows) -> rows by transform name, then site
--   rollout.materialize(agent, row), rollout.accept(agent, row, result):
--       the contract of agent/steps.lua
local aliasing = require "klineage.transforms.lib.aliasing"
local steps = require "klineage.agent.steps"
local transforms = require "klineage.transforms"

local M = {}

function M.rows(agent, names)
  local out = {}
  for _, site in ipairs(transforms.sites(agent.current.source, { direction = "apply", names = names, facts = aliasing.facts(agent.workload) })) do
    out[#out + 1] = { skill = "transform:" .. site.transform, transform = site.transform, site = site.key,
                      params_key = "{}", applies = site }
  end
  return out
end

function M.in_order(_, rows)
  table.sort(rows, function(a, b)
    if a.transform ~= b.transform then return a.transform < b.transform end
    return a.site < b.site
  end)
  return rows
end

function M.materialize(agent, row)
  local text, f = transforms.run(row.applies)
  if text and text ~= agent.current.source then return { source = text, by = "transform" } end
  return nil, "the transform did not apply: " .. (f and f.message or "it changed nothing")
end

function M.accept(agent, row, result)
  -- On cuda the compare decides, as for any policy: a correct change it could not time is not kept.
  if result.verdict ~= "ok" or result.effect.measured or agent.backend == "cuda" then return steps.accept(agent, row, result) end
  return true, "correct on " .. agent.backend .. "; its speed was not measured there (a baseline keeps every correct change)"
end

return M
