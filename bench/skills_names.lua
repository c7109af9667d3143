-- bench/skills_names.lua: how many conditions of a skill repository are
-- keyed by a name that a training kernel or its spec chose (issue 33:
-- facts by role, never by name).
--
--   klineage run bench/skills_names.lua [DIR]     (default skills/sm_90)
--
-- A condition is name-keyed when its fact's key embeds one of the names
-- of its record's observations (klineage.skills.learn.names: their
-- `names`, and what their facts' keys hold in a name's place), plus the
-- names of the lineage specs under gpu/workloads the observations cite.
-- Prints one line a name-keyed condition (record, kind, condition, why),
-- then the count of conditions by fact family, and last, machine-readable:
--   skills-name-keyed-conditions: N/M
local learn = require "klineage.skills.learn"
local roles = require "klineage.facts.roles"
local store = require "klineage.skills.store"

local home = require("kl.host").home or "."
local dir = ({ ... })[1] or (home .. "/skills/sm_90")

local records, problems = store.load(dir)
if not records then error("bench/skills_names: " .. tostring(problems and problems.message or problems)) end
for _, p in ipairs(problems or {}) do io.stderr:write(string.format("%s: %s\n", tostring(p.path), tostring(p.message))) end

-- the names a lineage's spec chose (its buffers, parameters, arguments)
local spec_names = {}
local function lineage_names(lineage)
  if spec_names[lineage] == nil then
    local ok, w = pcall(require("klineage.workload").load, home .. "/gpu/workloads/" .. lineage .. "/workload.lua")
    spec_names[lineage] = ok and w and roles.names(nil, nil, w) or false
  end
  return spec_names[lineage] or {}
end

local total, named, families = 0, 0, {}
table.sort(records, function(a, b) return a.id < b.id end)
for _, r in ipairs(records) do
  local names = learn.names(r.observations or {})
  for _, o in ipairs(r.observations or {}) do
    for n, what in pairs(lineage_names(o.lineage)) do names[n] = names[n] or what end
  end
  for _, kind in ipairs({ "preconditions", "guards" }) do
    for _, c in ipairs(r[kind]) do
      total = total + 1
      local family = (c[1]:match("^(.*)_after$") or c[1]):match("^([%w_]+)")
      families[family] = families[family] or { 0, 0 }
      families[family][2] = families[family][2] + 1
      local n, why = learn.name_keyed(c[1], names)
      if n then
        named = named + 1
        families[family][1] = families[family][1] + 1
        print(string.format("%-44s %-13s %-40s %s", r.id, kind:sub(1, -2), c[1] .. " " .. c[2] .. " " .. tostring(c[3]), why))
      end
    end
  end
end
print("")
print(string.format("%-16s %s", "family", "name-keyed/conditions"))
local order = {}
for f in pairs(families) do order[#order + 1] = f end
table.sort(order)
for _, f in ipairs(order) do print(string.format("%-16s %d/%d", f, families[f][1], families[f][2])) end
print(string.format("skills-name-keyed-conditions: %d/%d", named, total))
