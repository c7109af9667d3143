-- How a skill record cites one of its observations. learn makes every
-- evidence entry of a record with these two functions, and the record's
-- file (klineage.skills.layout) writes an entry that is exactly what they
-- give for observation i as the index i, so the two must stay one code.
--
--   refs.step(o) -> "from -> to" (with " (at size)" for a size probe) | nil
--   refs.short(o) -> the ref a condition or an unexplained failure cites:
--       { run, key, candidate, kind, lineage, step, outcome, speedup,
--         measured, verdict, size } (absent fields nil)
--   refs.full(o) -> the record's own evidence entry: short, and site,
--       backend, arch, ci, params, from, to (ci and params copied)
local M = {}

function M.step(o)
  if o.from and o.to then return o.from .. " -> " .. o.to .. (o.size and " (at " .. o.size .. ")" or "") end
end

function M.short(o)
  local e = o.evidence
  return { run = e.run, key = e.key, candidate = e.candidate, kind = e.kind, lineage = o.lineage,
           step = M.step(o), outcome = o.outcome, speedup = o.speedup, measured = o.measured,
           verdict = o.verdict, size = o.size }
end

local function copy(v) -- a deep copy of plain data (learn and layout use it)
  if type(v) ~= "table" then return v end
  local t = {}
  for k, x in pairs(v) do t[k] = copy(x) end
  return t
end
M.copy = copy

function M.full(o)
  local r = M.short(o)
  r.site, r.backend, r.arch, r.ci, r.params = o.site, o.backend, o.arch, copy(o.ci), copy(o.params)
  r.from, r.to = o.from, o.to
  return r
end

return M
