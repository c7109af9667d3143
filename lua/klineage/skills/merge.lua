-- Merging skill repositories: records with the same id pool their
-- observations, and each is learned again from the pool
-- (klineage.skills.learn), so a guard one repository found and the
-- helped cases another saw end up in one record that weighs both.
--
--   merge.records(lists [, opts]) -> { record... } sorted by id | nil, failure
--     lists = { { record... }... } (what store.load gives per folder)
--     opts = { arch = "sm_90" (default: the records' arch), intents }
--     Observations are deduplicated by evidence run, key and candidate
--     (the same judgement seen by two repositories counts once; of two
--     different observations under one evidence, the one whose canonical
--     text sorts first is kept, so the choice does not depend on order).
--     The same lists in any order give the same records. Records that
--     were all transferred from one arch stay "transferred", their change
--     lines pooled (sorted); otherwise the result is "learned".
--     bad_input: the records are of different archs (transfer one first),
--     or a record has no observations to learn from and another record
--     has its id (a lone one is kept as it is).
--   merge.repositories(dirs [, opts]) -> records | nil, failure
--     loads each folder with klineage.skills.store.load (a folder it
--     cannot load is its failure; files it refuses are left out, as
--     store.load leaves them) and merges the records.
local learn = require "klineage.skills.learn"
local verdicts = require "klineage.base.verdicts"

local M = {}

local function bad(fmt, ...) return nil, verdicts.failure("bad_input", "skills merge: " .. string.format(fmt, ...)) end

local function evidence_key(o)
  local e = o.evidence or {}
  return table.concat({ tostring(e.run), tostring(e.key), tostring(e.candidate or "") }, "\0")
end

function M.records(lists, opts)
  if type(lists) ~= "table" then error("merge.records: a list of record lists expected", 2) end
  opts = opts or {}
  local by_id, ids, arch = {}, {}, opts.arch
  local archs = {}
  for i, list in ipairs(lists) do
    if type(list) ~= "table" then error("merge.records: list " .. i .. " is not a table", 2) end
    for _, r in ipairs(list) do
      if type(r) ~= "table" or type(r.id) ~= "string" then error("merge.records: a record without an id", 2) end
      if not by_id[r.id] then by_id[r.id] = {} ids[#ids + 1] = r.id end
      local g = by_id[r.id]
      g[#g + 1] = r
      archs[r.arch] = true
    end
  end
  if not arch then
    local names = {}
    for a in pairs(archs) do names[#names + 1] = tostring(a) end
    table.sort(names)
    if #names > 1 then return bad("the records are of different archs (%s): transfer them to one first", table.concat(names, ", ")) end
    arch = names[1]
  end
  table.sort(ids)
  local out = {}
  for _, id in ipairs(ids) do
    local group = by_id[id]
    for _, r in ipairs(group) do
      if r.arch ~= arch then return bad("'%s' is for %s, not %s", id, tostring(r.arch), arch) end
    end
    local bare = {}
    for _, r in ipairs(group) do if type(r.observations) ~= "table" or #r.observations == 0 then bare[#bare + 1] = r end end
    if #bare > 0 then
      if #group > 1 then return bad("'%s' has a record with no observations to learn from, and another beside it", id) end
      out[#out + 1] = group[1]
    else
      local pool, order = {}, {}
      for _, r in ipairs(group) do
        for _, o in ipairs(r.observations) do
          local k = evidence_key(o)
          local text = learn.canonical(o)
          if not pool[k] then order[#order + 1] = k end
          if not pool[k] or text < pool[k].text then pool[k] = { obs = o, text = text } end
        end
      end
      table.sort(order)
      local observations = {}
      for i, k in ipairs(order) do observations[i] = pool[k].obs end
      local r = learn.skill(id, observations, { arch = arch, intents = opts.intents })
      -- Records all moved from one arch stay transferred, with every line of change.
      local from = group[1].transferred_from
      for _, g in ipairs(group) do if g.status ~= "transferred" or g.transferred_from ~= from then from = nil end end
      if from then
        local lines, seen = {}, {}
        for _, g in ipairs(group) do
          for _, l in ipairs(g.changes or {}) do
            if type(l) == "string" and not seen[l] then seen[l] = true lines[#lines + 1] = l end
          end
        end
        table.sort(lines)
        r.status, r.transferred_from, r.changes = "transferred", from, lines
      end
      out[#out + 1] = r
    end
  end
  return out
end

function M.repositories(dirs, opts)
  if type(dirs) ~= "table" then error("merge.repositories: a list of folders expected", 2) end
  local store = require "klineage.skills.store"
  local lists = {}
  for i, dir in ipairs(dirs) do
    local records, failure = store.load(dir)
    if not records then return nil, failure end
    lists[i] = records
  end
  return M.records(lists, opts)
end

return M
