-- Proposers: the candidate simplifications of a kernel of the walk's
-- frontier (search/backward.lua's state:propose).
-- Each returns candidates in a fixed order (a resumed walk must propose the
-- same ones), each a gate candidate with its provenance:
--
--   undo      the undo of every transform at every site (lua/klineage/transforms)
--   recorded  the expert's previous version, when the current kernel is a
--             lineage version
--   hunks     each hunk of the recorded step (previous -> current version),
--             reverted alone (klineage.pattern.stepdiff), when there are at least two
--   llm       the walk's LLM (search.run's opts.llm, klineage.llm.simplifier)
--             asked to remove one optimization, through state:ask_llm (one
--             charged cycle); nothing without one. An LLM answers
--             differently each time: a walk that must resume to the same
--             candidates records its calls and replays them (--llm replay)
--
--   proposers.NAMES = { "undo", "recorded", "hunks", "llm" }
--   proposers.propose(state, names, node) -> { candidate... }
--     candidate = { source, label, kernel, version (a lineage index, or nil),
--                   provenance = { parent = sha256, producer = { kind, name, params, edit } },
--                   node (the kernel it simplifies), site (undo only) }
local aliasing = require "klineage.transforms.lib.aliasing"
local stepdiff = require "klineage.pattern.stepdiff"
local transforms = require "klineage.transforms"
local hash = require "kl.hash"

local M = {}

M.NAMES = { "undo", "recorded", "hunks", "llm" }

local function candidate(walk, node, text, label, producer, extra)
  local c = { source = text, label = label, kernel = walk.workload.kernel, file = walk.workload.dir .. "/" .. label,
              provenance = { parent = node.sha256, producer = producer }, node = node }
  for k, v in pairs(extra or {}) do c[k] = v end
  return c
end

local by_name = {}

function by_name.undo(walk, node, out)
  for _, site in ipairs(transforms.sites(node.source, { direction = "undo", facts = aliasing.facts(walk.workload) })) do
    local text = transforms.run(site)
    if text and text ~= node.source then
      out[#out + 1] = candidate(walk, node, text, string.format("undo %s %s", site.transform, site.key),
        { kind = "transform", name = site.transform, params = site.params, edit = site.key, direction = "undo" },
        { site = { transform = site.transform, key = site.key, check = site.check, line = site.line } })
    end
  end
end

local function previous(walk, node)
  local i = node.version
  if not i or i < 2 then return nil end
  local w = walk.workload
  return walk:lineage_text(i - 1), w.lineage[i - 1], i - 1
end

function by_name.recorded(walk, node, out)
  local text, file, i = previous(walk, node)
  if text then
    out[#out + 1] = candidate(walk, node, text, file, { kind = "recorded", name = file }, { version = i })
  end
end

function by_name.hunks(walk, node, out)
  local text, file = previous(walk, node)
  if not text then return end
  local hunks = stepdiff.diff(text, node.source)
  local real = {}
  for i, h in ipairs(hunks or {}) do if not h.trivia then real[#real + 1] = i end end
  if #real < 2 then return end -- one hunk reverted is the recorded version itself
  for _, i in ipairs(real) do
    local t = stepdiff.revert(node.source, hunks, { i })
    if t and t ~= node.source then
      out[#out + 1] = candidate(walk, node, t, string.format("revert hunk %d of %s", i, walk.workload.lineage[node.version]),
        { kind = "hunk", name = file, edit = string.format("hunk %d at line %d", i, hunks[i].new.line or 0) })
    end
  end
end

function by_name.llm(walk, node, out)
  if not walk.llm then return end
  -- Charged and journaled by the engine, an unusable answer too: what the LLM cost is part of the walk.
  local text, call = walk:ask_llm({ kernel = node.source, workload = walk.workload }, "simplify")
  if text and text ~= node.source then
    out[#out + 1] = candidate(walk, node, text, "llm simplification", { kind = "llm", name = call and call.provider or "llm" })
  end
end

function M.propose(walk, names, node)
  local out, seen = {}, {}
  for _, name in ipairs(names or M.NAMES) do
    local f = by_name[name]
    if not f then error("no proposer named '" .. tostring(name) .. "' (proposers: " .. table.concat(M.NAMES, ", ") .. ")", 2) end
    local list = {}
    f(walk, node, list)
    for _, c in ipairs(list) do
      -- The same text from two proposers is one candidate: the first one names it.
      local sha = hash.sha256(c.source)
      if not seen[sha] and not walk.visited[sha] then
        seen[sha] = true
        c.sha256 = sha
        out[#out + 1] = c
      end
    end
  end
  return out
end

return M
