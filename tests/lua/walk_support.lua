-- What walk_spec.lua and walk_long_spec.lua share: klineage walk's JSON
-- summary, and the records of a run's journal. Loaded with the spec's own
-- environment (klineage, fail come from the test runner).
local cjson = require "cjson"
local journal = require "klineage.store.journal"
local M = {}

function M.walk_json(...)
  local out, code = klineage("walk", "--backend", "emu", "--quiet", "--json", ...)
  if code ~= 0 then fail("klineage walk exited %s: %s", tostring(code), out) end
  local line = out:match("(%b{})%s*$")
  if not line then fail("no JSON summary in: %s", out) end
  return cjson.decode(line)
end

function M.records(dir, kind)
  local out = {}
  for _, r in ipairs((journal.read(dir .. "/journal.jsonl"))) do
    if not kind or r.kind == kind then out[#out + 1] = r end
  end
  return out
end

function M.charged(dir)
  local n = 0
  for _, r in ipairs(M.records(dir)) do if r.charged then n = n + 1 end end
  return n
end

function M.shas(summary)
  local out = {}
  for _, s in ipairs(summary.steps) do out[#out + 1] = s.to_sha256 end
  return table.concat(out, " ")
end

return M
