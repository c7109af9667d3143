-- Whether two skill repositories hold the same records, whatever the layout
-- of their files: each folder is loaded by klineage.skills.store (indices
-- resolved, observations read from beside the record or from inside it),
-- and each record compared as klineage.skills.serialize writes a value, so
-- that 64 and 64.0 differ as they do for the learner.
--
--   klineage run scripts/compare-skills.lua OLD_DIR NEW_DIR
--
-- Exit 0 when every record is the same, 1 when one differs or is on one
-- side only, 2 when a folder does not load or holds a bad file.
local serialize = require "klineage.skills.serialize"
local store = require "klineage.skills.store"

local a, b = arg[1], arg[2]
if not a or not b then
  io.stderr:write("usage: klineage run scripts/compare-skills.lua OLD_DIR NEW_DIR\n")
  return 2
end

local function load(dir)
  local records, problems = store.load(dir)
  if not records then
    io.stderr:write(problems.message, "\n")
    return nil
  end
  if #problems > 0 then
    for _, p in ipairs(problems) do io.stderr:write(p.path, ": ", p.message, "\n") end
    return nil
  end
  local by_id, ids = {}, {}
  for _, r in ipairs(records) do
    by_id[r.id] = r
    ids[#ids + 1] = r.id
  end
  return by_id, ids
end

-- The first path where two plain values differ, or nil.
local function first_difference(x, y, path)
  if type(x) ~= "table" or type(y) ~= "table" then
    if serialize.value(x) ~= serialize.value(y) then return path end
    return nil
  end
  local keys = {}
  for k in pairs(x) do keys[#keys + 1] = k end
  for k in pairs(y) do if x[k] == nil then keys[#keys + 1] = k end end
  table.sort(keys, function(p, q) return tostring(p) < tostring(q) end)
  for _, k in ipairs(keys) do
    local d = first_difference(x[k], y[k], path .. "." .. tostring(k))
    if d then return d end
  end
  return nil
end

local old, old_ids = load(a)
local new, new_ids = load(b)
if not old or not new then return 2 end
local differ, observations = 0, 0
for _, id in ipairs(old_ids) do
  local r = new[id]
  if not r then
    differ = differ + 1
    io.stdout:write(id, ": only in ", a, "\n")
  elseif serialize.value(old[id]) ~= serialize.value(r) then
    differ = differ + 1
    io.stdout:write(id, ": differs at ", first_difference(old[id], r, id) or "?", "\n")
  else
    observations = observations + #(r.observations or {})
  end
end
for _, id in ipairs(new_ids) do
  if not old[id] then
    differ = differ + 1
    io.stdout:write(id, ": only in ", b, "\n")
  end
end
io.stdout:write(string.format("%d records in %s, %d in %s: %d differ; the same ones hold %d observations\n", #old_ids, a,
  #new_ids, b, differ, observations))
return differ == 0 and 0 or 1
