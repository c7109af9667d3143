-- The rows a forward search proposes from the skill repository (state:skills
-- and state:rank in search/forward.lua call these; the engine materializes
-- a row when it is judged). A node is a kernel of the frontier:
--   node = { source, sha256, label, record (its gate record), facts }
--
--   skill_rows.rows(state, node [, { held_back = true }]) -> rows: skills.match
--       rows of the node's kernel that are admitted, one per parameter set
--       to try, none already judged at this kernel; the blocked ones are
--       journaled as skipped (decision records), with what blocked them.
--       With held_back, the rows blocked only by conditions learned from
--       slowdowns come too, marked held_back = why (see held_back_for_speed)
--       row = { skill, site, transform, record (the skill), params,
--               params_key, held_back, ranked_down = { { condition, kind,
--               text }... } | nil (the conditions that only rank and
--               speak against it here: skills.match's ranks), because =
--               { text... }, node }
--   skill_rows.held_back_for_speed(row, record) -> true when everything
--       blocking the row is a precondition or guard none of whose evidence
--       was a wrong or rejected result, or the record's "never seen to
--       help" with no such result among its observations: it predicts a
--       loss of speed, which the compare can check, and not a wrong kernel
--   skill_rows.rank(rows) -> rows, best first: admitted before held back,
--       those nothing speaks against before those ranked down, then expected gain (the skill's median measured speedup) times its
--       confidence, then the cheaper materialization (transform, template,
--       llm), then id. Schedule rows (state:schedules) rank among them by
--       the static model's predicted speedup, at the model's confidence
--   skill_rows.materialize(state, row, node) -> { source, params, by, llm
--       (the call's record) } | nil, why [, { llm = call record, verdict }]
--       (an LLM was asked, through state:ask_llm, and its answer was unusable)
local aliasing = require "klineage.transforms.lib.aliasing"
local describe = require "klineage.skills.describe"
local learn = require "klineage.skills.learn"
local match = require "klineage.skills.match"
local serialize = require "klineage.skills.serialize"
local schedule_rank = require "klineage.search.schedule_rank"
local transforms = require "klineage.transforms"

local M = {}

-- The state.tried key of a row at a node: what the search judged (or ruled
-- out) there, so that no later step of the run offers it again; skill
-- rows, schedule rows and forward.lua spell it with this.
function M.tried_key(node, skill, site, params_key)
  return node.sha256 .. "|" .. skill .. "|" .. tostring(site) .. "|" .. tostring(params_key)
end

M.CONFIDENCE_WEIGHT = { high = 1.0, medium = 0.75, low = 0.5, ["seen once"] = 0.35 }
M.MAX_PARAM_SETS = 3 -- parameter sets tried per skill and site, from its evidence
local COST = { transform = 1, template = 2, llm = 3 }

local function by_id(state)
  if not state.skill_index then
    state.skill_index = {}
    for _, r in ipairs(state:skill_records()) do state.skill_index[r.id] = r end
  end
  return state.skill_index
end

-- "reuse.A = 64 ≥ 8": each admitting condition with the value it read.
-- Facts "_after" were read by match on the transformed kernel.
local function because(r, values, ranks)
  local function reading(fact)
    if values[fact] ~= nil then return string.format("%s = %s", fact, describe.value(fact, values[fact])) end
    if fact:match("_after$") then return "read on the changed kernel" end
    return fact .. " unknown"
  end
  local out = {}
  local against = {}
  for _, x in ipairs(ranks or {}) do against[x.condition] = true end
  for _, c in ipairs(r.preconditions) do
    if not against[c] then out[#out + 1] = string.format("%s (%s)", describe.condition(c), reading(c[1])) end
  end
  for _, g in ipairs(r.guards) do
    if not against[g] then out[#out + 1] = string.format("not %s (%s)", describe.condition(g), reading(g[1])) end
  end
  for _, x in ipairs(ranks or {}) do
    out[#out + 1] = "ranked down, not blocked: " .. x.text
  end
  if #out == 0 then out[1] = "no precondition or guard was learned: it matched the pattern" end
  return out
end

-- The parameter sets a transform skill is tried with: its materialization's
-- own, then the distinct ones of its helped evidence.
local function param_sets(r)
  local sets, seen = {}, {}
  local function add(p)
    local key = serialize.value(p or {})
    if not seen[key] and #sets < M.MAX_PARAM_SETS then seen[key] = true sets[#sets + 1] = { params = p, key = key } end
  end
  add(r.materialize.params)
  for _, e in ipairs(r.evidence) do
    -- as the transform takes them: the journal's 64.0 and "THREADS" are not
    if e.outcome == "helped" and e.params then add(learn.transform_params(r.materialize.transform, e.params)) end
  end
  return sets
end

local CORRECTNESS = { wrong = true, rejected = true }

function M.held_back_for_speed(row, record)
  if #row.blockers == 0 then return false end
  for _, b in ipairs(row.blockers) do
    -- "never seen to help" is the record's whole evidence; a condition's is its own
    local evidence = b.kind == "evidence" and record and record.evidence
      or (b.kind == "precondition" or b.kind == "guard") and b.condition.evidence
    if not evidence then return false end
    for _, e in ipairs(evidence) do
      if CORRECTNESS[e.outcome] then return false end
    end
  end
  return true
end

function M.rows(state, node, opts)
  local rows, f = match.kernel(state:skill_records(), node.source, { workload = state.workload, arch = state.ctx.arch,
                                                                    record = node.record })
  if not rows then error("the current kernel cannot be matched: " .. tostring(f.message), 0) end
  local out, skills = {}, by_id(state)
  local values = nil
  local function add(row, r, held_back)
    local against = not held_back and #row.ranks > 0 and row.ranks or nil
    values = values or learn.values({ facts = state:facts(node), facts_after = {} })
    for _, set in ipairs(r.pattern.transform and param_sets(r) or { { key = "{}" } }) do
      local tried = M.tried_key(node, row.skill, row.site, set.key)
      if not state.tried[tried] then
        out[#out + 1] = { skill = row.skill, site = row.site, transform = row.transform, record = r, node = node,
                          params = set.params, params_key = set.key, held_back = held_back, ranked_down = against,
                          because = held_back and { "held back by " .. held_back .. "; tried only after the ranked candidates, where timed" }
                            or because(r, values, against) }
      end
    end
  end
  for _, row in ipairs(rows) do
    local r = skills[row.skill]
    if row.status == "blocked" then
      -- A pattern that cannot be read is the repository's defect, not this kernel's: said once, at the first step.
      if not (row.blocked_by and row.blocked_by.kind == "pattern" and state.step > 1) then
        state:decide(row, node, { status = "skipped", why = row.blocked_by and row.blocked_by.text or "blocked" })
      end
      if opts and opts.held_back and M.held_back_for_speed(row, r) then add(row, r, row.blocked_by.text) end
    else
      add(row, r, nil)
    end
  end
  return out
end

-- A skill's expected gain: its median measured speedup over 1, times its
-- confidence. A schedule row (no record) has the static model's predicted
-- speedup instead, weighed as the model's confidence (search/schedule_rank.lua).
local function score(row)
  local r = row.record
  if not r then
    local p = schedule_rank.prior(row) * (row.predicted and row.predicted.speedup or 1)
    return (p - 1) * M.CONFIDENCE_WEIGHT[schedule_rank.CONFIDENCE]
  end
  local s = r.effect and r.effect.speedup and r.effect.speedup.median or 1
  return (s - 1) * (M.CONFIDENCE_WEIGHT[r.confidence.level] or 0.25)
end

local function cost(row)
  if not row.record then return COST.transform end -- emitted by kir: no LLM, no template
  local m = row.record.materialize
  return m.transform and COST.transform or m.template and COST.template or COST.llm
end

function M.rank(rows)
  for _, row in ipairs(rows) do row.score, row.cost = score(row), cost(row) end
  table.sort(rows, function(a, b)
    if (a.held_back == nil) ~= (b.held_back == nil) then return a.held_back == nil end
    if (a.ranked_down == nil) ~= (b.ranked_down == nil) then return a.ranked_down == nil end
    if a.score ~= b.score then return a.score > b.score end
    if a.cost ~= b.cost then return a.cost < b.cost end
    if a.skill ~= b.skill then return a.skill < b.skill end
    if tostring(a.site) ~= tostring(b.site) then return tostring(a.site) < tostring(b.site) end
    return a.params_key < b.params_key
  end)
  return rows
end

-- A template's hunks, each found once in the kernel's text and replaced by
-- its other side; nil when any is missing (the kernel is not the one the
-- template came from).
local function apply_template(text, t)
  local SEP = "\n/* ... */\n"
  local before, after = {}, {}
  for part in (t.before .. SEP):gmatch("(.-)" .. SEP:gsub("%p", "%%%0")) do before[#before + 1] = part end
  for part in (t.after .. SEP):gmatch("(.-)" .. SEP:gsub("%p", "%%%0")) do after[#after + 1] = part end
  if #before ~= #after then return nil end
  for i, b in ipairs(before) do
    if b == "" then return nil end -- an insertion has no anchor to find
    local at = text:find(b, 1, true)
    if not at or text:find(b, at + 1, true) then return nil end
    text = text:sub(1, at - 1) .. after[i] .. text:sub(at + #b)
  end
  return text
end

function M.materialize(state, row, node)
  local m = row.record.materialize
  if m.transform then
    for _, site in ipairs(transforms.sites(node.source, { names = { m.transform }, direction = "apply",
                                                    facts = aliasing.facts(state.workload) })) do
      if site.key == row.site then
        local text, f = transforms.run(site, row.params)
        if text and text ~= node.source then return { source = text, params = row.params, by = "transform" } end
        return nil, "the transform did not apply: " .. (f and f.message or "it changed nothing")
      end
    end
    return nil, "the transform's site is gone from the current kernel"
  end
  if m.template then
    local text = apply_template(node.source, m.template)
    if text then return { source = text, by = "template" } end
  end
  if not state.llm then
    return nil, m.template and "the template's text is not in this kernel, and no LLM is configured to adapt it"
      or "it needs an LLM, and none is configured"
  end
  local text, call = state:ask_llm({ skill = row.record, kernel = node.source, workload = state.workload, site = row.site,
                                     facts = state:facts(node) }, "materialize")
  if not text then
    if state.exhausted then return nil, "no cycle was left to ask the LLM" end
    -- An answer the gate cannot take (no code, another signature) was still a call, charged when it was asked.
    local f = call
    return nil, "the LLM gave no usable kernel: " .. tostring(f and f.message or f),
      { llm = type(f) == "table" and f.record or nil, verdict = type(f) == "table" and f.verdict or nil }
  end
  return { source = text, by = "llm", llm = call }
end

return M
