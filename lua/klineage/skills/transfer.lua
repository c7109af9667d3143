-- Moving skills to another GPU: each observation's facts are computed
-- again for the target arch (klineage.facts.for_arch: the arch limits and
-- the occupancy model over the same registers and shared memory), the
-- skill is learned again from them (klineage.skills.learn), and what that
-- changed is said in English.
--
--   transfer.repository(records, target_arch) -> records, changes | nil, failure
--     records: learned (or transferred) records with their observations
--     each record returned: status = "transferred", arch = target,
--       transferred_from = the record's arch, changes = its lines
--     changes = { { id = record id, lines = { text... } }... } sorted by id:
--       conditions added, removed or changed, and the observations whose
--       occupancy (or its limiting resource) moved
--     bad_input: a target kl.occupancy does not know (sm_80, sm_86, sm_89,
--       sm_90 are), or a record with no observations to learn from
--   The records given are not changed.
--
-- The speedups stay those measured on the source arch: transfer predicts
-- where the learned conditions now fall, it measures nothing. Registers
-- stay those ptxas gave for the source arch (facts.for_arch without a
-- compile), and each record's lines say so.
local describe = require "klineage.skills.describe"
local facts = require "klineage.facts"
local learn = require "klineage.skills.learn"
local verdicts = require "klineage.base.verdicts"

local M = {}

local function bad(fmt, ...) return nil, verdicts.failure("bad_input", "skills transfer: " .. string.format(fmt, ...)) end

-- A facts object from a flat table, recomputed for arch, flat again.
local function flat_for_arch(flat, arch)
  local f = facts.new()
  local names = {}
  for k in pairs(flat or {}) do names[#names + 1] = k end
  table.sort(names)
  for _, k in ipairs(names) do
    local e = facts.describe(k)
    if e then f:set(k, flat[k], e.from) end
  end
  local g, failure = facts.for_arch(f, arch)
  if not g then return nil, failure end
  return learn.keep_facts(g.values)
end

local function step_name(o)
  local s = o.lineage or "?"
  if o.from and o.to then s = s .. " " .. o.from .. " -> " .. o.to end
  return s
end

local function said_occupancy(flat)
  if flat.occupancy == nil then return "unknown" end
  local s = describe.value("occupancy", flat.occupancy)
  if flat["occupancy.limited_by"] then s = s .. " (" .. flat["occupancy.limited_by"] .. ")" end
  return s
end

-- Lines for conditions of one kind ("precondition" / "guard").
local function condition_changes(kind, old, new, lines)
  local function index(list)
    local by_fact, keys = {}, {}
    for _, c in ipairs(list) do
      local k = c[1] .. " " .. c[2]
      if not by_fact[k] then keys[#keys + 1] = k end
      by_fact[k] = c
    end
    return by_fact, keys
  end
  local o, okeys = index(old)
  local n, nkeys = index(new)
  for _, k in ipairs(okeys) do
    local a, b = o[k], n[k]
    if not b then lines[#lines + 1] = kind .. " removed: " .. describe.condition(a)
    elseif a[3] ~= b[3] then
      lines[#lines + 1] = kind .. " changed: " .. describe.condition(a) .. " -> " .. describe.condition(b)
    end
  end
  for _, k in ipairs(nkeys) do
    if not o[k] then lines[#lines + 1] = kind .. " added: " .. describe.condition(n[k]) end
  end
end

local function transfer_one(r, target)
  if type(r.observations) ~= "table" or #r.observations == 0 then
    return bad("'%s' has no observations to learn from", tostring(r.id))
  end
  local lines = {}
  local moved = {}
  for i, o in ipairs(r.observations) do
    local p = learn.copy(o)
    local before, fb = flat_for_arch(o.facts, target)
    if not before then return nil, fb end
    local after, fa = flat_for_arch(o.facts_after, target)
    if not after then return nil, fa end
    p.facts, p.facts_after = before, after
    moved[i] = p
    local was, now = said_occupancy(o.facts or {}), said_occupancy(before)
    if was ~= now then lines[#lines + 1] = step_name(o) .. ": occupancy " .. was .. " -> " .. now end
    local was_a, now_a = said_occupancy(o.facts_after or {}), said_occupancy(after)
    if was_a ~= now_a then
      lines[#lines + 1] = step_name(o) .. ": occupancy after the change " .. was_a .. " -> " .. now_a
    end
  end
  local t = learn.skill(r.id, moved, { arch = target })
  t.intent = r.intent -- the record's own, which may have been written by hand
  local changes = {}
  condition_changes("precondition", r.preconditions or {}, t.preconditions, changes)
  condition_changes("guard", r.guards or {}, t.guards, changes)
  for _, line in ipairs(lines) do changes[#changes + 1] = line end
  if #changes == 0 then changes[1] = "no condition and no occupancy changed" end
  changes[#changes + 1] = "registers and spills are those ptxas gave for " .. tostring(r.arch) .. ", not compiled again"
  t.status = "transferred"
  t.transferred_from = r.arch
  t.changes = changes
  return t
end

function M.repository(records, target)
  if type(records) ~= "table" then error("transfer.repository: records expected", 2) end
  if type(target) ~= "string" or not require("kl.occupancy").limits(target) then
    return bad("unknown architecture '%s' (kl.occupancy knows sm_80, sm_86, sm_89, sm_90)", tostring(target))
  end
  local out, changes = {}, {}
  for _, r in ipairs(records) do
    local t, failure = transfer_one(r, target)
    if not t then return nil, failure end
    out[#out + 1] = t
  end
  table.sort(out, function(a, b) return a.id < b.id end)
  for i, t in ipairs(out) do changes[i] = { id = t.id, lines = t.changes } end
  return out, changes
end

return M
