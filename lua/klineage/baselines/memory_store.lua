-- The memory-based baseline's store (after KernelSkill and KernelBlaster):
-- past optimization trajectories, one per lineage of the observations it
-- is built from, each the walk's recorded steps inverted and put in
-- forward order (v0 toward the expert), with v0's source tokens and facts
-- for retrieval. Probes are not trajectories and are left out, and so are
-- steps no transform explains (a template only replays in its own kernel).
--
--   store.build(observations) -> { { task, v0 = { tokens, facts }, transforms = { name... } }... }
--   store.similarity(entry, tokens, facts) -> 0..1: the mean of the Jaccard
--     index of the source tokens and the share of shared facts that agree
--     (equal, or numbers within a factor of 2)
--   store.retrieve(store, source, facts) -> entry, similarity | nil
local workload = require "klineage.workload"
local files = require "klineage.files"

local M = {}

function M.tokens(source)
  local set = {}
  for word in source:gsub("//[^\n]*", ""):gmatch("[%a_][%w_]*") do set[word] = true end
  return set
end

function M.build(observations)
  local by = {}
  for _, o in ipairs(observations or {}) do
    if o.transform and o.lineage and o.evidence and o.evidence.kind == "walk_step" then
      by[o.lineage] = by[o.lineage] or {}
      table.insert(by[o.lineage], o)
    end
  end
  local out = {}
  for lineage, obs in pairs(by) do
    local w = workload.load(lineage)
    local index = {}
    for i, label in ipairs(w and w.lineage or {}) do index[label] = i end
    table.sort(obs, function(a, b)
      local ia, ib = index[a.from] or math.huge, index[b.from] or math.huge
      if ia ~= ib then return ia < ib end
      return a.transform < b.transform
    end)
    local names, first = {}, obs[1]
    for _, o in ipairs(obs) do names[#names + 1] = o.transform end
    local v0 = w and files.read_text(w.dir .. "/" .. w.lineage[1]) or ""
    out[#out + 1] = { task = lineage, transforms = names, v0 = { tokens = M.tokens(v0), facts = first.facts or {} } }
  end
  table.sort(out, function(a, b) return a.task < b.task end)
  return out
end

function M.similarity(entry, tokens, facts)
  local both, either = 0, 0
  for t in pairs(tokens) do either = either + 1 if entry.v0.tokens[t] then both = both + 1 end end
  for t in pairs(entry.v0.tokens) do if not tokens[t] then either = either + 1 end end
  local agree, shared = 0, 0
  for k, v in pairs(facts) do
    local u = entry.v0.facts[k]
    if u ~= nil and type(u) == type(v) then
      shared = shared + 1
      if u == v or (type(v) == "number" and v > 0 and u > 0 and math.max(u / v, v / u) <= 2) then agree = agree + 1 end
    end
  end
  return ((either > 0 and both / either or 0) + (shared > 0 and agree / shared or 0)) / 2
end

function M.retrieve(store, source, facts)
  local tokens, best, score = M.tokens(source), nil, -1
  for _, e in ipairs(store) do
    local s = M.similarity(e, tokens, facts or {})
    if s > score then best, score = e, s end
  end
  return best, best and score or nil
end

return M
