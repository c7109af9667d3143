-- Explaining a recorded step: which transforms' undo, applied to the
-- expert's version vN, reproduce vN-1. Chains of up to MAX_DEPTH undos are
-- tried by a beam search: at each depth every undo of the BEAM results
-- closest to vN-1 (fewest static facts differing), at most MAX_TRIED
-- results in all. A result
-- reproduces vN-1 when it is
--   identical   the same tokens and the same @kl lines (comments and
--               layout aside), or
--   same_facts  the same static facts of the kernel (klineage.facts, from
--               the source and the workload; resources are not compared,
--               since they need a compile)
-- "same_facts" is a claim the gate can test: where kernels are timed the
-- walk times the reproduction against vN-1 by the interleaved compare
-- (search/backward.lua).
--
--   explain.step(w, newer, older [, opts]) -> {
--     explained = boolean, how = "identical" | "same_facts" | nil,
--     chain = { { transform, key }... } (the undos, in order), source (the
--     reproduction), tried = n, partial = { best chain by facts differing }
--   }
local aliasing = require "klineage.transforms.lib.aliasing"
local facts = require "klineage.facts"
local transforms = require "klineage.transforms"
local source = require "kl.source"

local M = {}

M.MAX_DEPTH = 4
M.BEAM = 6
M.MAX_TRIED = 400

-- The text with comments and layout dropped, the @kl lines kept.
function M.normalized(text)
  local unit = source.parse(text)
  local parts = {}
  for line in text:gmatch("[^\n]*") do
    local kl = line:match("//%s*(@kl%s.*)$")
    if kl then parts[#parts + 1] = (kl:gsub("%s+", " ")) end
  end
  for _, tok in ipairs(unit:tokens()) do parts[#parts + 1] = tok.text end
  return table.concat(parts, "\1")
end

-- The static facts, a #define's name replaced by its value wherever it
-- names a fact (define.TILE, size.M.div.TILE): a reproduction that calls
-- the tile TILE where the expert said BLOCK_DIM is the same kernel.
local function static_facts(w, text)
  local f = facts.of(text, w.kernel, { workload = w, compile = false })
  if not f then return nil end
  local defined = {}
  for name, v in pairs(f.values) do
    local d = name:match("^define%.(.+)$")
    if d then defined[d] = "<" .. tostring(v) .. ">" end
  end
  local out = {}
  for name, v in pairs(f.values) do
    if f.from[name] == "source" or name:match("^size%.") then
      out[(name:gsub("[^%.]+", function(part) return defined[part] end))] = tostring(v)
    end
  end
  return out
end

local function differing(a, b)
  local n = 0
  for k, v in pairs(a) do if b[k] ~= v then n = n + 1 end end
  for k in pairs(b) do if a[k] == nil then n = n + 1 end end
  return n
end

function M.step(w, newer, older, opts)
  opts = opts or {}
  local want_text = M.normalized(older)
  local want_facts = static_facts(w, older)
  local frontier, seen = { { text = newer, chain = {} } }, { [M.normalized(newer)] = true }
  local tried, best = 0, nil
  local same_facts
  for _ = 1, opts.max_depth or M.MAX_DEPTH do
    local next_frontier = {}
    for _, node in ipairs(frontier) do
      for _, site in ipairs(transforms.sites(node.text, { direction = "undo", facts = aliasing.facts(w) })) do
        if tried >= (opts.max_tried or M.MAX_TRIED) then break end
        local text = transforms.run(site)
        if text then
          local norm = M.normalized(text)
          if not seen[norm] then
            seen[norm] = true
            tried = tried + 1
            local chain = { table.unpack(node.chain) }
            chain[#chain + 1] = { transform = site.transform, key = site.key }
            if norm == want_text then
              return { explained = true, how = "identical", chain = chain, source = text, tried = tried }
            end
            local f = want_facts and static_facts(w, text)
            if f then
              local d = differing(f, want_facts)
              if d == 0 and not same_facts then same_facts = { chain = chain, source = text } end
              if not best or d < best.differing then best = { chain = chain, differing = d } end
            end
            next_frontier[#next_frontier + 1] = { text = text, chain = chain, differing = f and differing(f, want_facts) or math.huge }
          end
        end
      end
    end
    -- The closest first; ties in the order found, so the search is the same every time.
    for i, n in ipairs(next_frontier) do n.order = i end
    table.sort(next_frontier, function(a, b)
      if a.differing ~= b.differing then return a.differing < b.differing end
      return a.order < b.order
    end)
    frontier = { table.unpack(next_frontier, 1, math.min(#next_frontier, opts.beam or M.BEAM)) }
    if #frontier == 0 then break end
  end
  if same_facts then
    return { explained = true, how = "same_facts", chain = same_facts.chain, source = same_facts.source, tried = tried }
  end
  return { explained = false, tried = tried, partial = best }
end

return M
