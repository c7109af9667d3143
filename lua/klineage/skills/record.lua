-- The skill record: one file skills/<arch>/<id>.lua, `return <table>`,
-- written by klineage.skills.serialize (ARCHITECTURE.md, "Skill record").
-- This is the record as it is used, once loaded; in its file the
-- observations lie beside it and evidence cites them by index
-- (klineage.skills.layout):
--
--   schema = 1
--   id = "smem_tiling"             [a-z0-9_-]+, the file name's stem
--   arch = "sm_90"                 sm_XX (or sm_XXX)
--   status = "learned" | "transferred"
--   intent = "one sentence"
--   materialize = { transform = T [, params = { NAME = scalar }] }
--              | { schedule = FAMILY [, params = { NAME = scalar }] }: a
--                prior over kir's schedule rows of a primitive family
--                (search/schedules.lua), params the values it saw pay
--              | { template = { before = text, after = text } }
--              | { llm = true [, example = { before = text, after = text }] }
--   pattern = { transform = T } | { schedule = FAMILY } | { source = "<pattern text>" }
--   preconditions = { condition... }   must hold for the skill to apply
--   guards = { condition... }          block the skill when they hold
--     condition = { fact, op, value [, why = text] [, source = "walk" | "probe"]
--                   [, blocks = boolean (false: it only ranks the skill
--                   down; absent, as in a condition written by hand: it blocks)]
--                   [, support = { helped = n, not_helped = n }]
--                   [, evidence = { evidence... }] }
--     op one of describe.OPS; value a number, boolean or string; a fact
--     ending in "_after" is the kernel's fact once the skill is applied
--   effect = { [speedup = { median, min, max (numbers), n (integer >= 1)
--                            [, ci = { lo, hi }: the median's noise interval] }]
--              [, resources = { fact = number }] [, metrics = { name = number }] }   optional
--   confidence = { supporting = n, contradicting = n, [lineages = n,]
--                  level = "seen once" | "low" | "medium" | "high" [, why = text] }
--   evidence = { { run = text, key = text [, candidate, lineage, step, kind,
--                  site, from, to, backend, arch, verdict, size = text]
--                  [, outcome = helped | no_difference | hurt | wrong | rejected]
--                  [, speedup = number] [, ci = { lo, hi }] [, measured = boolean]
--                  [, params = { NAME = scalar }] }... }
--   example = { before = text, after = text }            optional
--   observations = { observation... }  optional: what it was learned from
--     (skills/learn.lua gives the shape), so that merge and transfer learn
--     again; each plain data with skill, lineage and evidence { run, key }
--   unexplained = { { evidence = { evidence... }, why = text }... }   optional:
--     failures no fact separates from the cases where the skill helped
--   transferred_from = "sm_90", changes = { text or plain table... }
--                                   required on (and only on) a transferred skill
--
--   record.validate(t) -> t | nil, failure (bad_input): the message names
--     the first bad field by its path ("guards[2][2]: op must be one of
--     ..."); an unknown field anywhere in a known shape is refused, so a
--     typo shows instead of being ignored.
--   record.never_helped(record) -> true when every labelled observation of
--     the skill is one where it did not help (its confidence says so): a
--     matcher leaves it out, the learner admits it nowhere
--   record.FIELDS, record.OUTCOMES, record.LEVELS
local describe = require "klineage.skills.describe"
local verdicts = require "klineage.base.verdicts"

local M = {}

M.OUTCOMES = { "helped", "no_difference", "hurt", "wrong", "rejected" }
M.LEVELS = { "seen once", "low", "medium", "high" }
M.STATUSES = { "learned", "transferred" }
M.SOURCES = { "walk", "probe" }

-- true: required; false: optional.
M.FIELDS = {
  schema = true, id = true, arch = true, status = true, intent = true, materialize = true, pattern = true,
  preconditions = true, guards = true, confidence = true, evidence = true,
  effect = false, example = false, transferred_from = false, changes = false, observations = false, unexplained = false,
}

local function set_of(list)
  local s = {}
  for _, v in ipairs(list) do s[v] = true end
  return s
end

local OUTCOME_SET, LEVEL_SET, STATUS_SET, SOURCE_SET =
  set_of(M.OUTCOMES), set_of(M.LEVELS), set_of(M.STATUSES), set_of(M.SOURCES)

local OP_LIST = {}
for op in pairs(describe.OPS) do OP_LIST[#OP_LIST + 1] = op end
table.sort(OP_LIST)
local OP_TEXT = table.concat(OP_LIST, " ")

local function quoted(list)
  local out = {}
  for i, v in ipairs(list) do out[i] = '"' .. v .. '"' end
  return table.concat(out, ", ")
end

-- Validation raises a Bad (caught at the boundary) naming the path.
local Bad = {}
local function bad(path, fmt, ...)
  error(setmetatable({ message = path .. ": " .. string.format(fmt, ...) }, Bad), 0)
end

local function key_path(path, k)
  if math.type(k) == "integer" then return path .. "[" .. k .. "]" end
  if type(k) == "string" and k:match("^[%a_][%w_]*$") then return path == "" and k or (path .. "." .. k) end
  return path .. "[" .. string.format("%q", tostring(k)) .. "]"
end

local function want_type(path, v, ty)
  if type(v) ~= ty then bad(path, "must be a %s, got %s", ty, type(v)) end
end

local function want_string(path, v)
  want_type(path, v, "string")
  if v == "" then bad(path, "must not be empty") end
end

local function want_count(path, v)
  if math.type(v) ~= "integer" or v < 0 then bad(path, "must be a whole number >= 0, got %s", tostring(v)) end
end

local function want_number(path, v)
  if type(v) ~= "number" then bad(path, "must be a number, got %s", type(v)) end
  if v ~= v or v == math.huge or v == -math.huge then bad(path, "must be a finite number, got %s", tostring(v)) end
end

local function want_scalar(path, v)
  local t = type(v)
  if t == "number" then want_number(path, v)
  elseif t ~= "string" and t ~= "boolean" then bad(path, "must be a number, boolean or string, got %s", t) end
end

local function want_one_of(path, v, set, list)
  if not set[v] then bad(path, "must be one of %s, got %s", quoted(list), string.format("%q", tostring(v))) end
end

-- A table with only the string keys of `fields` (name -> true required,
-- false optional); returns t.
local function want_fields(path, t, fields)
  want_type(path, t, "table")
  for k in pairs(t) do
    if type(k) ~= "string" or fields[k] == nil then bad(key_path(path, k), "unknown field") end
  end
  local names = {}
  for k in pairs(fields) do names[#names + 1] = k end
  table.sort(names) -- the first missing field named is the same every time
  for _, k in ipairs(names) do
    if fields[k] and t[k] == nil then bad(key_path(path, k), "missing") end
  end
  return t
end

-- A list 1..n with no other keys.
local function want_list(path, t)
  want_type(path, t, "table")
  local n = #t
  for k in pairs(t) do
    if math.type(k) ~= "integer" or k < 1 or k > n then bad(key_path(path, k), "a list has only the keys 1..%d", n) end
  end
  for i = 1, n do
    if t[i] == nil then bad(key_path(path, i), "a list has no holes") end
  end
  return n
end

-- A table of name -> scalar (transform params).
local function want_params(path, t)
  want_type(path, t, "table")
  for k, v in pairs(t) do
    if type(k) ~= "string" or not k:match("^[%a_][%w_]*$") then bad(key_path(path, k), "a parameter name must be an identifier") end
    want_scalar(key_path(path, k), v)
  end
end

local function want_numbers_by_name(path, t)
  want_type(path, t, "table")
  for k, v in pairs(t) do
    if type(k) ~= "string" or k == "" then bad(key_path(path, k), "a name must be a non-empty string") end
    want_number(key_path(path, k), v)
  end
end

local function want_before_after(path, t)
  want_fields(path, t, { before = true, after = true })
  want_type(path .. ".before", t.before, "string")
  want_type(path .. ".after", t.after, "string")
end

local EVIDENCE_FIELDS = {
  run = true, key = true, candidate = false, lineage = false, step = false, kind = false, site = false,
  from = false, to = false, backend = false, arch = false, verdict = false, outcome = false, speedup = false,
  ci = false, measured = false, params = false, size = false,
}

local function want_evidence(path, e)
  want_fields(path, e, EVIDENCE_FIELDS)
  for _, k in ipairs({ "run", "key" }) do want_string(key_path(path, k), e[k]) end
  for _, k in ipairs({ "candidate", "lineage", "step", "kind", "site", "from", "to", "backend", "arch", "verdict", "size" }) do
    if e[k] ~= nil then want_type(key_path(path, k), e[k], "string") end
  end
  if e.outcome ~= nil then want_one_of(path .. ".outcome", e.outcome, OUTCOME_SET, M.OUTCOMES) end
  if e.speedup ~= nil then want_number(path .. ".speedup", e.speedup) end
  if e.measured ~= nil then want_type(path .. ".measured", e.measured, "boolean") end
  if e.params ~= nil then want_params(path .. ".params", e.params) end
  if e.ci ~= nil then
    if want_list(path .. ".ci", e.ci) ~= 2 then bad(path .. ".ci", "must be { lo, hi }") end
    want_number(path .. ".ci[1]", e.ci[1])
    want_number(path .. ".ci[2]", e.ci[2])
  end
end

local function want_evidence_list(path, list)
  for i = 1, want_list(path, list) do want_evidence(path .. "[" .. i .. "]", list[i]) end
end

local CONDITION_KEYS = { why = true, source = true, support = true, evidence = true, blocks = true }

local function want_condition(path, c)
  want_type(path, c, "table")
  for k in pairs(c) do
    if not (CONDITION_KEYS[k] or k == 1 or k == 2 or k == 3) then
      bad(key_path(path, k), "unknown field (a condition is { fact, op, value [, why, source, blocks, support, evidence] })")
    end
  end
  want_string(path .. "[1]", c[1])
  if not c[1]:match("^[%w_.%-]+$") then bad(path .. "[1]", "a fact name is made of [A-Za-z0-9_.-], got %q", c[1]) end
  if not describe.OPS[c[2]] then bad(path .. "[2]", "op must be one of %s, got %s", OP_TEXT, string.format("%q", tostring(c[2]))) end
  if c[3] == nil then bad(path .. "[3]", "missing (the value)") end
  want_scalar(path .. "[3]", c[3])
  if c.why ~= nil then want_type(path .. ".why", c.why, "string") end
  if c.source ~= nil then want_one_of(path .. ".source", c.source, SOURCE_SET, M.SOURCES) end
  if c.blocks ~= nil then want_type(path .. ".blocks", c.blocks, "boolean") end
  if c.support ~= nil then
    want_fields(path .. ".support", c.support, { helped = true, not_helped = true })
    want_count(path .. ".support.helped", c.support.helped)
    want_count(path .. ".support.not_helped", c.support.not_helped)
  end
  if c.evidence ~= nil then want_evidence_list(path .. ".evidence", c.evidence) end
end

local function want_conditions(path, list)
  for i = 1, want_list(path, list) do want_condition(path .. "[" .. i .. "]", list[i]) end
end

local function want_transform_name(path, v)
  want_string(path, v)
  if not v:match("^[%w_]+$") then bad(path, "a transform name is made of [A-Za-z0-9_], got %q", v) end
end

local function want_materialize(path, m)
  want_type(path, m, "table")
  if m.transform ~= nil then
    want_fields(path, m, { transform = true, params = false })
    want_transform_name(path .. ".transform", m.transform)
    if m.params ~= nil then want_params(path .. ".params", m.params) end
  elseif m.schedule ~= nil then
    want_fields(path, m, { schedule = true, params = false })
    want_transform_name(path .. ".schedule", m.schedule)
    if m.params ~= nil then want_params(path .. ".params", m.params) end
  elseif m.template ~= nil then
    want_fields(path, m, { template = true })
    want_before_after(path .. ".template", m.template)
  elseif m.llm ~= nil then
    want_fields(path, m, { llm = true, example = false })
    if m.llm ~= true then bad(path .. ".llm", "must be true") end
    if m.example ~= nil then want_before_after(path .. ".example", m.example) end
  else
    bad(path, "must be { transform = ... }, { schedule = ... }, { template = ... } or { llm = true }")
  end
end

local function want_pattern(path, p)
  want_type(path, p, "table")
  if p.transform ~= nil then
    want_fields(path, p, { transform = true })
    want_transform_name(path .. ".transform", p.transform)
  elseif p.schedule ~= nil then
    want_fields(path, p, { schedule = true })
    want_transform_name(path .. ".schedule", p.schedule)
  elseif p.source ~= nil then
    want_fields(path, p, { source = true })
    want_string(path .. ".source", p.source)
  else
    bad(path, "must be { transform = T }, { schedule = FAMILY } or { source = pattern text }")
  end
end

local function want_effect(path, e)
  want_fields(path, e, { speedup = false, resources = false, metrics = false })
  if e.speedup ~= nil then
    local s = want_fields(path .. ".speedup", e.speedup, { median = true, min = true, max = true, n = true, ci = false })
    for _, k in ipairs({ "median", "min", "max" }) do want_number(path .. ".speedup." .. k, s[k]) end
    if s.ci ~= nil then
      if want_list(path .. ".speedup.ci", s.ci) ~= 2 then bad(path .. ".speedup.ci", "must be { lo, hi }") end
      want_number(path .. ".speedup.ci[1]", s.ci[1])
      want_number(path .. ".speedup.ci[2]", s.ci[2])
      if s.ci[1] > s.ci[2] then bad(path .. ".speedup.ci", "must have lo <= hi") end
    end
    if math.type(s.n) ~= "integer" or s.n < 1 then bad(path .. ".speedup.n", "must be a whole number >= 1, got %s", tostring(s.n)) end
    if not (s.min <= s.median and s.median <= s.max) then bad(path .. ".speedup", "must have min <= median <= max") end
  end
  if e.resources ~= nil then want_numbers_by_name(path .. ".resources", e.resources) end
  if e.metrics ~= nil then want_numbers_by_name(path .. ".metrics", e.metrics) end
end

local function want_arch(path, v)
  want_type(path, v, "string")
  if not (v:match("^sm_%d%d$") or v:match("^sm_%d%d%d$")) then bad(path, "must be an architecture like \"sm_90\", got %q", v) end
end

local function want_plain(path, v, depth)
  local t = type(v)
  if t == "table" then
    if depth > 8 then bad(path, "nested too deep") end
    for k, x in pairs(v) do
      if type(k) ~= "string" and math.type(k) ~= "integer" then bad(path, "keys must be strings or integers") end
      want_plain(key_path(path, k), x, depth + 1)
    end
  else
    want_scalar(path, v)
  end
end

local function check(t)
  want_type("the record", t, "table")
  want_fields("", t, M.FIELDS)
  if t.schema ~= 1 or math.type(t.schema) ~= "integer" then bad("schema", "must be 1, got %s", tostring(t.schema)) end
  want_string("id", t.id)
  if not t.id:match("^[a-z0-9_%-]+$") or #t.id > 128 then
    bad("id", "must be 1 to 128 characters of [a-z0-9_-], got %q", t.id:sub(1, 140))
  end
  want_arch("arch", t.arch)
  want_one_of("status", t.status, STATUS_SET, M.STATUSES)
  want_string("intent", t.intent)
  want_materialize("materialize", t.materialize)
  want_pattern("pattern", t.pattern)
  want_conditions("preconditions", t.preconditions)
  want_conditions("guards", t.guards)
  if t.effect ~= nil then want_effect("effect", t.effect) end
  want_fields("confidence", t.confidence, { supporting = true, contradicting = true, level = true, why = false, lineages = false })
  if t.confidence.lineages ~= nil then want_count("confidence.lineages", t.confidence.lineages) end
  if t.confidence.why ~= nil then want_string("confidence.why", t.confidence.why) end
  want_count("confidence.supporting", t.confidence.supporting)
  want_count("confidence.contradicting", t.confidence.contradicting)
  want_one_of("confidence.level", t.confidence.level, LEVEL_SET, M.LEVELS)
  want_evidence_list("evidence", t.evidence)
  if t.example ~= nil then want_before_after("example", t.example) end
  if t.observations ~= nil then
    for i = 1, want_list("observations", t.observations) do
      local path, o = "observations[" .. i .. "]", t.observations[i]
      want_plain(path, o, 1)
      want_type(path, o, "table")
      want_string(path .. ".skill", o.skill)
      want_string(path .. ".lineage", o.lineage)
      want_type(path .. ".evidence", o.evidence, "table")
      want_string(path .. ".evidence.run", o.evidence.run)
      want_string(path .. ".evidence.key", o.evidence.key)
    end
  end
  if t.unexplained ~= nil then
    for i = 1, want_list("unexplained", t.unexplained) do
      local path = "unexplained[" .. i .. "]"
      want_fields(path, t.unexplained[i], { evidence = true, why = true })
      want_evidence_list(path .. ".evidence", t.unexplained[i].evidence)
      want_string(path .. ".why", t.unexplained[i].why)
    end
  end
  if t.status == "transferred" then
    if t.transferred_from == nil then bad("transferred_from", "missing (a transferred skill names the arch it came from)") end
    want_arch("transferred_from", t.transferred_from)
    if t.changes == nil then bad("changes", "missing (a transferred skill lists what the transfer changed)") end
  else
    if t.transferred_from ~= nil then bad("transferred_from", "only a transferred skill has it") end
    if t.changes ~= nil then bad("changes", "only a transferred skill has it") end
  end
  if t.changes ~= nil then
    for i = 1, want_list("changes", t.changes) do want_plain("changes[" .. i .. "]", t.changes[i], 1) end
  end
end

function M.validate(t)
  local ok, e = pcall(check, t)
  if ok then return t end
  if getmetatable(e) == Bad then
    local id = type(t) == "table" and type(t.id) == "string" and t.id:match("^[%w_%-]+$") and t.id
    return nil, verdicts.failure("bad_input", (id and ("skill " .. id .. ": ") or "skill record: ") .. e.message)
  end
  error(e, 0)
end

function M.never_helped(record)
  local c = record.confidence
  return c ~= nil and c.supporting == 0 and c.contradicting > 0
end

return M
