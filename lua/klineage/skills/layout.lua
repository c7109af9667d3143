-- A skill record as its files hold it: <id>.lua cites its observations by
-- index, and the observations lie beside it in <id>.observations.jsonl
-- (klineage.skills.observations_file), so that the record reads in a diff
-- (a learned record repeated every observation in each condition that
-- cited it: pragma_unroll was 49,479 lines).
--
--   layout.pack(record) -> file_table, observations_text | nil, failure
--       (bad_input: an observation JSON cannot hold). record is a valid
--       record as learn gives it, and is not changed. file_table is what
--       <id>.lua returns; observations_text is nil for a record without
--       observations (no .jsonl is written for it)
--   layout.observations_file(id) -> "<id>.observations.jsonl"
--   layout.cites(file_table) -> true when it names an observations file
--   layout.unpack(file_table, stem, observations_text | nil) -> record
--       | nil, message: the record as learn gave it; stem is the file's
--       name without ".lua" (the file it must name). Not yet validated
--       (klineage.skills.record.validate is the caller's next step).
--
-- In the file table:
--   observations = { file = "<id>.observations.jsonl", n = count,
--                    sha256 = of that file's text }
--     the file is checked against n and sha256 when it is read: a save
--     cut short between the two files (the .jsonl is written first), or a
--     file edited by hand, is refused, never read with shifted indices;
--   an evidence entry that is exactly what klineage.skills.refs gives for
--     observation i is the integer i: refs.full in the record's evidence,
--     refs.short in a condition's (preconditions, guards) and in an
--     unexplained failure's. Any other entry stays a table.
-- The layout before this one (observations inline as a list, every
-- evidence entry a table) is read as it is: an inline list is the
-- record's observations, and a table entry is itself. Writing it again
-- (skills merge DIR --out DIR, or learning again) gives the new layout.
local observations_file = require "klineage.skills.observations_file"
local refs = require "klineage.skills.refs"
local serialize = require "klineage.skills.serialize"

local M = {}

function M.observations_file(id) return id .. ".observations.jsonl" end

local copy = refs.copy

-- Each evidence list of a record with the form of ref it holds.
local function each_list(r, fn)
  if type(r.evidence) == "table" then fn(r.evidence, "full", "evidence") end
  for _, field in ipairs({ "preconditions", "guards", "unexplained" }) do
    if type(r[field]) == "table" then
      for i, c in ipairs(r[field]) do
        if type(c) == "table" and type(c.evidence) == "table" then
          fn(c.evidence, "short", string.format("%s[%d].evidence", field, i))
        end
      end
    end
  end
end

function M.pack(r)
  local t = copy(r)
  local obs = r.observations
  if type(obs) ~= "table" or #obs == 0 then
    t.observations = nil
    return t
  end
  local text, f = observations_file.encode(obs)
  if not text then return nil, f end
  -- the text of each ref an observation gives -> its first index
  local index = { full = {}, short = {} }
  for i = #obs, 1, -1 do
    index.full[serialize.value(refs.full(obs[i]))] = i
    index.short[serialize.value(refs.short(obs[i]))] = i
  end
  each_list(t, function(list, form)
    for j, e in ipairs(list) do
      local i = index[form][serialize.value(e) or ""]
      if i then list[j] = i end
    end
  end)
  t.observations = { file = M.observations_file(r.id), n = #obs, sha256 = require("kl.hash").sha256(text) }
  return t, text
end

-- Whether t.observations names a file (the new layout), not a list.
function M.cites(t)
  local o = t.observations
  return type(o) == "table" and o.file ~= nil
end

local function check_reference(o, stem)
  for k in pairs(o) do
    if k ~= "file" and k ~= "n" and k ~= "sha256" then
      return string.format("observations.%s: unknown field (it is { file, n, sha256 })", tostring(k))
    end
  end
  if o.file ~= M.observations_file(stem) then
    return string.format("observations.file: must be '%s', got %s", M.observations_file(stem),
      type(o.file) == "string" and ("'" .. o.file .. "'") or type(o.file))
  end
  if math.type(o.n) ~= "integer" or o.n < 1 then return "observations.n: must be a whole number >= 1" end
  if type(o.sha256) ~= "string" or not o.sha256:match("^" .. ("%x"):rep(64) .. "$") then
    return "observations.sha256: must be 64 hex digits"
  end
end

function M.unpack(t, stem, text)
  local r = copy(t)
  local obs = r.observations
  if M.cites(r) then
    local why = check_reference(obs, stem)
    if why then return nil, why end
    if not text then return nil, "its observations file " .. obs.file .. " was not read" end
    if require("kl.hash").sha256(text) ~= obs.sha256 then
      return nil, string.format("%s is not the file this record was written with (its sha256 differs: a save cut short, "
        .. "or an edit by hand): learn the repository again", obs.file)
    end
    local list, err = observations_file.decode(text)
    if not list then return nil, obs.file .. ": " .. err end
    if #list ~= obs.n then
      return nil, string.format("%s holds %d observations, the record says %d", obs.file, #list, obs.n)
    end
    r.observations = list
    obs = list
  end
  local n = type(obs) == "table" and #obs or 0
  local problem
  each_list(r, function(list, form, path)
    for j, e in ipairs(list) do
      if math.type(e) == "integer" and not problem then
        if e < 1 or e > n then
          problem = string.format("%s[%d]: cites observation %d, but the record has %d", path, j, e, n)
        else
          -- an observation from a stranger's file may lack what a ref reads
          local ok, ref = pcall(refs[form], obs[e])
          if ok then list[j] = ref
          else problem = string.format("%s[%d]: observation %d cannot be cited (%s)", path, j, e, (tostring(ref):gsub("\n.*", ""))) end
        end
      end
    end
  end)
  if problem then return nil, problem end
  return r
end

return M
