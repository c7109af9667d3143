-- The forward search: a user's kernel optimized under the gate and the
-- run's counted budget (search/init.lua runs the loop; klineage optimize
-- and klineage eval call it). The input kernel is the correctness
-- reference of every candidate (never a candidate itself), gated first
-- against itself: an input that fails is baseline_broken. A candidate is
-- judged by gate.judge: the gate and, where the backend times kernels
-- (ctx.timed), the interleaved compare against the frontier kernel it came
-- from; every result has an effect, "not measured" and why included.
--
-- A result is accepted when it is correct and, timed, faster beyond noise.
-- Untimed (emu), a correct candidate of a skill is accepted only where the
-- skill's measured evidence says faster beyond its noise (the interval of
-- its median speedup, effect.speedup.ci, wholly above 1); otherwise it is
-- reported correct and not kept. One of no skill (a bare
-- transform, an LLM's answer) is accepted as it is: a baseline keeps every
-- correct change. Every decision says that no effect was measured.
--
-- What a forward policy may call on state, beside search/init.lua's:
--   state:skills([{ held_back = bool, node }]) -> rows: the skills the
--       repository admits at the node (default state.current), one per
--       parameter set, none judged there already; the blocked ones are
--       journaled as skipped (search/skill_rows.lua). The repository is
--       opts.skills, else the run context's (klineage.skills.store.of_context: skills/<arch>)
--   state:rank(rows) -> rows, best first (expected gain x confidence; a
--       schedule row's gain is its predicted speedup, at the static
--       model's confidence: search/skill_rows.lua)
--   state:schedules([{ node, depth, limit }]) -> rows: kir's legal schedule
--       sequences of the node's kernel, each row's source the emitted
--       text, predicted = { speedup, why } by search/schedule_rank.lua,
--       best first; a kernel that does not lift gives none, and its
--       reason is journaled once as a skipped decision (search/schedules.lua)
--   state:transforms([{ names, node }]) -> rows: every transform site of
--       the node's kernel, in the order transforms.sites gives, each to be
--       applied with its default parameters; no skill, no condition
--   state:in_order(rows) -> rows by transform name, then site
--   state:facts([node]) -> the kernel's facts (flat values, cached)
--   state:measure(result) -> result.effect
--   state.input (the input's node), state.memory (opts.memory: the
--   observations a memory policy retrieves from), state.tried
--   A candidate is a row: { skill (its id, or "transform:NAME", or any
--   name), site, params, params_key, because = { text... }, node (the
--   frontier kernel it changes; default state.current) } and one of
--     record  = a skill record: materialized by its transform, else its
--               template, else the LLM (state:ask_llm, charged)
--     applies = a transform site (transforms.sites): applied as it is
--     ask     = { attempt = n }: the LLM asked to optimize the kernel
--     source  = the candidate's text, with by = how it was made
--
--   opts (search.run) = { input = { source, label, file }, skills = { record... },
--     memory = { observation... }, seed, llm, progress, max_steps = 20 }
--   summary = { policy, steps = { step... }, final = { source, sha256, label },
--               stopped, cycles, decisions = n, backend, measured = bool, seconds }
--   progress events: baseline { label }, judging { skill, by }, decision
--   { skill, status, why }, step { skill, effect }, end { summary }
--
-- Journal records, each keyed so that a resumed run writes none twice:
--   decision = { kind = "decision", step, kernel (the node's sha256), skill,
--     site, params, status = "applied" | "rejected" | "skipped" |
--     "not_materialized", why (English), because = { text... } (the
--     conditions that admitted it, with the facts' values), verdict,
--     effect, candidate (sha256), source (src/...), by = "transform" |
--     "template" | "llm", llm = the LLM call's record (klineage.llm: no
--     key, no answer text) }. Journals written before the search/ folder
--     also have charged = true on a not_materialized decision whose LLM
--     answer was unusable; now the call's own llm_call record is charged.
--   optimize_step = { kind = "optimize_step", step, from, to, skill, site,
--     params, effect, source }
--   optimize_end = { kind = "optimize_end", stopped, steps, final, source,
--     policy (its name), seed (a seeded policy's) }
--   llm_call = { kind = "llm_call", optimize (the run's id), step, purpose,
--     charged = true, llm, verdict, message }
local aliasing = require "klineage.transforms.lib.aliasing"
local gate = require "klineage.gate"
local runs = require "klineage.store.runs"
local search = require "klineage.search"
local skill_rows = require "klineage.search.skill_rows"
local transforms = require "klineage.transforms"
local verdicts = require "klineage.base.verdicts"
local hash = require "kl.hash"
local host = require "kl.host"

local M = {}

M.MAX_STEPS = 20
-- Untimed, a schedule is kept only on a clear predicted gain: the static
-- model counts loads, not latency or occupancy, and is often wrong by tens
-- of percent; 1.5x leaves room for that error.
M.PREDICTED_MARGIN = 1.5
M.NONE_KEPT = "no candidate left that the gate accepted (the rest were rejected or could not be materialized)"

local State = setmetatable({}, { __index = search.State })
State.__index = State
M.State = State

function State:facts(node)
  node = node or self.current
  if node.facts == nil then
    local f = require("klineage.facts").of(node.source, self.workload.kernel,
      { workload = self.workload, arch = self.ctx.arch, record = node.record })
    node.facts = f and f.values or {}
  end
  return node.facts
end

function State:skill_records()
  if not self.skill_list then
    local records, f = require("klineage.skills.store").of_context(self.ctx)
    if not records then verdicts.raise(f.verdict, f.message) end
    self.skill_list = records
  end
  return self.skill_list
end

function State:skills(opts)
  opts = opts or {}
  return skill_rows.rows(self, opts.node or self.current, opts)
end

function State:rank(rows) return skill_rows.rank(rows) end

function State:schedules(opts)
  opts = opts or {}
  return require("klineage.search.schedules").rows(self, opts.node or self.current, opts)
end

function State:transforms(opts)
  opts = opts or {}
  local node = opts.node or self.current
  local out = {}
  for _, site in ipairs(transforms.sites(node.source, { direction = "apply", names = opts.names,
                                                        facts = aliasing.facts(self.workload) })) do
    out[#out + 1] = { skill = "transform:" .. site.transform, transform = site.transform, site = site.key,
                      params_key = "{}", applies = site, node = node }
  end
  return out
end

function State:in_order(rows)
  table.sort(rows, function(a, b)
    if a.transform ~= b.transform then return a.transform < b.transform end
    return a.site < b.site
  end)
  return rows
end

function State:measure(result) return result.effect end

local function keyed(state, kind, node, fields)
  local key = runs.key({ optimize = state.id, kind = kind, step = state.step, kernel = node.sha256,
                         skill = fields.skill, site = fields.site, params = fields.params, status = fields.status })
  if state.ctx:judged(key) then return end
  fields.kind, fields.key, fields.step = kind, key, state.step
  state.ctx:record(fields)
end

function State:decide(row, node, fields)
  fields.skill, fields.site, fields.params = row.skill, row.site, row.params
  fields.kernel = node.sha256
  keyed(self, "decision", node, fields)
  self.decisions = self.decisions + 1
  self:emit({ kind = "decision", skill = row.skill, status = fields.status, why = fields.why })
end

local function materialize(state, row, node)
  if row.source then return { source = row.source, params = row.params, by = row.by or "policy" } end
  if row.applies then
    local text, f = transforms.run(row.applies)
    if text and text ~= node.source then return { source = text, by = "transform" } end
    return nil, "the transform did not apply: " .. (f and f.message or "it changed nothing")
  end
  if row.record then return skill_rows.materialize(state, row, node) end
  if row.ask then
    local text, f = state:ask_llm({ kernel = node.source, workload = state.workload, facts = state:facts(node),
                                    attempt = row.ask.attempt }, "optimize")
    if text then return { source = text, by = "llm", llm = f } end
    if state.exhausted then return nil, "no cycle was left to ask the LLM" end
    return nil, "the LLM gave no usable kernel: " .. tostring(type(f) == "table" and f.message or f),
      { llm = type(f) == "table" and f.record or nil, verdict = type(f) == "table" and f.verdict or nil }
  end
  error("a forward candidate needs record, applies, ask or source (search/forward.lua)", 0)
end

-- Why an untimed backend could not keep a predicted row whatever the gate
-- says (its prediction is under the margin), or nil.
function M.short_of_margin(state, row)
  local p = row.predicted
  if state.timed or not p or p.speedup >= M.PREDICTED_MARGIN then return nil end
  return string.format("not measured and the static model predicts only %.2fx, under the %.1fx it takes (%s)",
    p.speedup, M.PREDICTED_MARGIN, p.why)
end

-- state needs timed and ctx.backend; row its record, when it is a skill's.
function M.accept(state, row, result)
  local backend = state.ctx.backend
  if result.verdict ~= "ok" then
    local s = result.record.stages
    local msg
    for _, name in ipairs({ "compile", "correct", "profile" }) do
      if s[name] and s[name].verdict and s[name].verdict ~= "ok" and s[name].verdict ~= "skipped" then msg = s[name].message break end
    end
    return false, string.format("the gate said %s%s", result.verdict, msg and (": " .. msg) or "")
  end
  local e = result.effect
  if e.measured then
    if e.outcome == "faster" then return true, string.format("correct and %.2fx faster (interval %.2f to %.2f)", e.speedup, e.ci[1], e.ci[2]) end
    return false, string.format("correct but not faster beyond noise (%.3fx, %s)", e.speedup, e.outcome)
  end
  -- Where the backend times kernels, no evidence stands in for a compare that failed.
  if state.timed then
    return false, "correct, but not kept: " .. tostring(e.why) .. " (on " .. backend .. " only a compare that finds it faster keeps a change)"
  end
  if row.predicted then
    local short = M.short_of_margin(state, row)
    if short then return false, "correct on " .. backend .. ", but " .. short end
    return true, string.format("correct on %s; not measured: kept on the static model's prediction of %.2fx (%s)",
      backend, row.predicted.speedup, row.predicted.why)
  end
  if not row.record then
    return true, "correct on " .. backend .. "; its speed was not measured there (a baseline keeps every correct change)"
  end
  -- A median above 1 by less than its noise is a coin toss (fast_math's
  -- 1.0028x was kept and ldg's 0.9997x refused): only an interval wholly
  -- above 1 says faster.
  local s = row.record.effect and row.record.effect.speedup
  if s and s.ci and s.ci[1] > 1 then
    return true, string.format("correct on %s; its speed was not measured there: kept because the skill's evidence "
      .. "says faster beyond its noise (%.3fx median over %d measurement%s, its interval %.3fx to %.3fx above 1)",
      backend, s.median, s.n, s.n == 1 and "" or "s", s.ci[1], s.ci[2])
  end
  local said
  if not s then said = "it has no measured speedup"
  elseif not s.ci then said = string.format("%.3fx median over %d measurements, with no noise interval", s.median, s.n)
  else
    said = string.format("%.3fx median over %d measurement%s, its interval %.3fx to %.3fx not above 1", s.median, s.n,
      s.n == 1 and "" or "s", s.ci[1], s.ci[2])
  end
  return false, string.format("correct on %s, but not kept: its speed was not measured there, and the skill's evidence "
    .. "does not say faster beyond its noise (%s)", backend, said)
end

-- A row judged at a node (skill_rows.tried_key: skill rows and schedule
-- rows leave out what was judged there).
local function mark_tried(state, node, row)
  state.tried[skill_rows.tried_key(node, row.skill, row.site, row.params_key)] = true
  if row.kir then require("klineage.search.schedules").judged(state, row) end
end

-- One candidate judged: materialized, gated, compared, accepted or not.
-- A refused one is journaled at once; an accepted one once choose has
-- said whether it is kept (M.settle). nil when no cycle is left.
local function judge_row(state, row)
  local node = row.node or state.current
  if state.ctx:exhausted() then
    state.exhausted = true
    return nil
  end
  -- A row the backend could not keep costs no cycle: on emu a schedule
  -- predicted under the margin is refused whatever the gate says.
  local short = M.short_of_margin(state, row)
  if short then
    local why = "not judged: " .. state.ctx.backend .. " times nothing, and it is " .. short
    state:decide(row, node, { status = "skipped", why = why, schedule = row.schedule, predicted = row.predicted, prior = row.prior })
    mark_tried(state, node, row)
    return { candidate = row, node = node, accepted = false, verdict = "skipped", why = why,
             effect = { measured = false, why = "not measured: " .. why } }
  end
  local made, why, asked = materialize(state, row, node)
  if state.exhausted then return nil end
  if not made then
    state:decide(row, node, { status = "not_materialized", why = why, llm = asked and asked.llm, verdict = asked and asked.verdict })
    return { candidate = row, node = node, accepted = false, verdict = asked and asked.verdict or "not_materialized", why = why,
             effect = { measured = false, why = "not measured: " .. tostring(why) } }
  end
  local provenance = { parent = node.sha256,
                       producer = { kind = "skill", name = row.skill, edit = row.site, params = made.params, by = made.by } }
  state:emit({ kind = "judging", skill = row.skill, by = made.by })
  local w, label = state.workload, string.format("%s at %s", row.skill, tostring(row.site))
  local result = gate.judge(state.ctx, { source = made.source, label = label, kernel = w.kernel, file = w.dir .. "/" .. label,
                                         provenance = provenance }, w,
    { baseline = state.reference, provenance = provenance,
      against = { source = node.source, label = node.label, kernel = w.kernel, file = w.dir .. "/" .. node.label } })
  if result.verdict == "budget_exhausted" then
    state.exhausted = true
    return nil
  end
  local ok, reason = M.accept(state, row, result)
  local sha = hash.sha256(made.source)
  -- (a refused candidate's decision has had no effect field: the journal's readers know it so)
  result.fields = { status = ok and "applied" or "rejected", why = reason, because = row.because, verdict = result.verdict,
                    effect = result.verdict == "ok" and result.effect or nil, candidate = sha, source = state.ctx:store_source(made.source), by = made.by,
                    llm = made.llm, schedule = row.schedule, predicted = row.predicted, prior = row.prior }
  mark_tried(state, node, row)
  result.candidate, result.node, result.made, result.sha256 = row, node, made, sha
  result.accepted, result.why = ok, reason
  if result.effect.measured then result.speedup = (node.speedup or 1) * result.effect.speedup end
  if not ok then state:decide(row, node, result.fields) end
  return result
end

function M.judge(state, judged, indices)
  for _, i in ipairs(indices) do
    judged.results[i] = judge_row(state, judged.candidates[i])
    if state.exhausted then return end
  end
end

-- The accepted results, in the order they were judged: the kept ones
-- applied, the others rejected with what was kept instead.
function M.settle(state, judged, kept)
  local is_kept = {}
  for _, r in ipairs(kept) do
    if not r.accepted then error("policy " .. state.policy.name .. " kept a candidate that was not accepted", 0) end
    is_kept[r] = true
  end
  for _, r in ipairs(judged:in_judged_order()) do
    if r.accepted then
      local fields = r.fields
      if not is_kept[r] then
        fields.status = "rejected"
        local best = kept[1]
        if not best then
          fields.why = fields.why .. "; not kept: the policy kept none"
        else
          local name = best.candidate.skill .. " at " .. tostring(best.candidate.site)
          fields.why = fields.why .. "; not kept: " .. (best.effect.measured and (name .. " did better")
            or (name .. " was accepted first, and " .. state.ctx.backend .. " times nothing to choose between them"))
        end
      end
      state:decide(r.candidate, r.node, fields)
    end
  end
end

function M.take(state, kept)
  local frontier = {}
  for _, r in ipairs(kept) do
    local row, node, made = r.candidate, r.node, r.made
    local label = string.format("step %d: %s", state.step, row.skill)
    keyed(state, "optimize_step", node, { from = node.sha256, to = r.sha256, skill = row.skill, site = row.site,
                                          params = made.params, effect = r.effect, source = r.fields.source })
    state.steps[#state.steps + 1] = { step = state.step, skill = row.skill, site = row.site, params = made.params,
                                      effect = r.effect, predicted = row.predicted, from = node.sha256, to = r.sha256 }
    frontier[#frontier + 1] = { source = made.source, sha256 = r.sha256, label = label, record = r.record,
                                speedup = r.speedup or node.speedup, kir = row.kir }
    state:emit({ kind = "step", skill = row.skill, effect = r.effect })
  end
  state.frontier, state.current = frontier, frontier[1]
end

function M.start(state, opts)
  local ctx, w, input = state.ctx, state.workload, opts.input
  if type(input) ~= "table" or type(input.source) ~= "string" then
    error("search.run (forward): opts.input = { source, label } expected", 3)
  end
  state.skill_list, state.memory, state.tried, state.decisions = opts.skills, opts.memory, {}, 0
  local label = input.label or "input.cu"
  local sha = hash.sha256(input.source)
  state.reference = { source = input.source, label = label, kernel = w.kernel, file = input.file or (w.dir .. "/" .. label) }
  state.id = runs.key({ optimize = sha, workload = w.sha256, policy = state.policy.name, backend = ctx.backend, seed = opts.seed })
  state.tag = { optimize = state.id }
  -- The input through the gate, as the reference of itself: it is the
  -- definition of correct here (the spec's C reference, when it has one,
  -- checks it first).
  state:emit({ kind = "baseline", label = label })
  local base = gate.evaluate(ctx, state.reference, w, { baseline = state.reference, profile = state.timed })
  if base.verdict ~= "ok" then
    return nil, verdicts.failure(base.verdict == "budget_exhausted" and "budget_exhausted" or "baseline_broken",
      string.format("the input kernel did not pass the gate (%s): %s", base.verdict, tostring(base.message or
        (base.stages.compile and base.stages.compile.message) or "see the journal")))
  end
  state.input = { source = input.source, sha256 = sha, label = label, record = base }
  state.frontier, state.current = { state.input }, state.input
  return true
end

function M.finish(state, stopped)
  local ctx = state.ctx
  keyed(state, "optimize_end", state.current, { stopped = stopped, steps = #state.steps, final = state.current.sha256,
                                                policy = state.policy.name, seed = state.seed,
                                                source = ctx:store_source(state.current.source) })
  local cur = state.current
  local summary = { policy = state.policy.name, steps = state.steps, stopped = stopped, cycles = ctx:spent() - state.spent0,
                    decisions = state.decisions, backend = ctx.backend, measured = ctx.timed,
                    final = { source = cur.source, sha256 = cur.sha256, label = cur.label },
                    seconds = host.clock() - state.t0 }
  state:emit({ kind = "end", summary = summary })
  return summary
end

return M
