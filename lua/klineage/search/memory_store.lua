-- The memory policy's store (search/policies/memory.lua; after KernelSkill
-- and KernelBlaster):
-- past optimization trajectories, one per lineage of the observations it
-- is built from: the longest chain of walk steps (kept, or judged and
-- helped), inverted and followed forward from v0 toward the expert, with
-- v0's source tokens and facts for retrieval. Probes are not trajectories
-- and are left out; steps no transform explains move along the chain and
-- add no transform (a template only replays in its own kernel).
--
--   store.build(observations) -> { { task, walk (the run ids on its path, +), v0 = { tokens, facts },
--       transforms = { name... } }... }, sorted by task
--   store.similarity(entry, tokens, facts) -> 0..1: the mean of the Jaccard
--     index of the source tokens and the share of shared facts that agree
--     (equal, or numbers within a factor of 2)
--   store.retrieve(store, source, facts) -> entry, similarity | nil
--   store.ahead(entry, kept) -> { { name, index }... }: the trajectory's
--     transforms after the last of kept (the names kept so far, in order)
--     that it matched, each name once, in order. The replay only moves
--     forward: a refused step is passed over, never offered again
local workload = require "klineage.workload"
local files = require "klineage.base.files"
local hash = require "kl.hash"

local M = {}

function M.tokens(source)
  local set = {}
  for word in source:gsub("//[^\n]*", ""):gmatch("[%a_][%w_]*") do set[word] = true end
  return set
end

-- The longest trajectory (in transforms) through a lineage's walk steps,
-- forward: from v0 (or, when no walk reached it, from the kernel
-- that gives the longest) along each step's candidate. The steps of all its walks
-- are one graph, since observations are deduplicated across walks; a path
-- through it is one real sequence of kernels, never two walks interleaved.
-- Template steps move along the path and name no transform.
local function trajectory(obs, v0_sha)
  local edges = {} -- from sha -> candidate sha -> { observations }
  for _, o in ipairs(obs) do
    local e = o.evidence
    edges[e.from] = edges[e.from] or {}
    edges[e.from][e.candidate] = edges[e.from][e.candidate] or {}
    table.insert(edges[e.from][e.candidate], o)
  end
  local best, busy = {}, {}
  local function from(sha)
    if best[sha] then return best[sha] end
    if busy[sha] then return { names = {}, runs = {} } end -- a cycle: walks never make one, but stop if they did
    busy[sha] = true
    local out = { names = {}, runs = {} }
    local targets = {}
    for to in pairs(edges[sha] or {}) do targets[#targets + 1] = to end
    table.sort(targets)
    for _, to in ipairs(targets) do
      local here, rest = {}, from(to)
      for _, o in ipairs(edges[sha][to]) do if o.transform then here[#here + 1] = o.transform end end
      if #here + #rest.names > #out.names then
        local names = table.move(rest.names, 1, #rest.names, #here + 1, here)
        out = { names = names, runs = { tostring(edges[sha][to][1].evidence.run), table.unpack(rest.runs) } }
      end
    end
    busy[sha], best[sha] = nil, out
    return out
  end
  -- From v0 where a walk reached it, else from whichever kernel gives the longest path.
  local starts = {}
  if edges[v0_sha] then starts = { v0_sha } else for sha in pairs(edges) do starts[#starts + 1] = sha end end
  table.sort(starts)
  local start, path
  for _, sha in ipairs(starts) do
    local p = from(sha)
    if not path or #p.names > #path.names then start, path = sha, p end
  end
  if not start then return nil end
  -- v0's facts for retrieval, from the first of its steps in sorted order (not next()'s, which varies by process).
  local outs = {}
  for to in pairs(edges[start]) do outs[#outs + 1] = to end
  table.sort(outs)
  local first = edges[start][outs[1]][1]
  local runs, seen = {}, {}
  for _, r in ipairs(path.runs) do if not seen[r] then seen[r] = true runs[#runs + 1] = r end end
  return { transforms = path.names, walk = table.concat(runs, "+"), facts = first.facts or {} }
end

function M.build(observations)
  local by = {} -- lineage -> its walk steps' observations
  for _, o in ipairs(observations or {}) do
    local e = o.evidence
    -- A kept walk step, or a judged one that helped: the observations are
    -- deduplicated across walks, the measured copy first, so a step one
    -- walk kept may come back as another walk's evidence.
    local step = e and (e.kind == "walk_step" or (e.kind == "walk_evidence" and o.outcome == "helped"))
    if o.lineage and step and e.from and e.candidate then
      by[o.lineage] = by[o.lineage] or {}
      table.insert(by[o.lineage], o)
    end
  end
  local out = {}
  for lineage, obs in pairs(by) do
    local w = workload.load(lineage)
    local v0 = w and files.read_text(w.dir .. "/" .. w.lineage[1]) or ""
    local t = trajectory(obs, hash.sha256(v0))
    if t and #t.transforms > 0 then
      out[#out + 1] = { task = lineage, walk = t.walk, transforms = t.transforms, v0 = { tokens = M.tokens(v0), facts = t.facts } }
    end
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

function M.ahead(entry, kept)
  local seq, at = entry.transforms, 0
  for _, name in ipairs(kept) do
    for i = at + 1, #seq do
      if seq[i] == name then at = i break end
    end
  end
  local out, offered = {}, {}
  for i = at + 1, #seq do
    if not offered[seq[i]] then
      offered[seq[i]] = true
      out[#out + 1] = { name = seq[i], index = i }
    end
  end
  return out
end

return M
