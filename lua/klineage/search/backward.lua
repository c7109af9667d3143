-- The backward search, the walk: from an expert kernel (its lineage's last
-- version), one gate-validated simplification at a time, each step
-- recorded with its measured effect and the facts before and after it
-- (search/init.lua runs the loop; klineage walk calls it). A candidate is
-- accepted when the gate passes it against the lineage's v0; its effect
-- (the optimization's speedup, current over candidate) is measured when a
-- policy asks, or when it is followed. A backward step judged in part (the
-- budget ran out) is not taken: the resumed walk judges it whole.
--
-- What a backward policy may call on state, beside search/init.lua's:
--   state:propose([names [, node]]) -> candidates of the node (default
--       state.current) from search/proposers.lua ("undo", "recorded",
--       "hunks", "llm"); kernels the walk has been at are left out
--   state:measure(result) -> effect, always: by the interleaved compare
--       (gate/compare.lua) with its interval where the backend times
--       kernels and the gate accepted it; else { measured = false, why }.
--       A result's effect is there once measured: a walk times only what
--       its policy asks for (and the step it follows)
--   state:explain(result) -> the transforms whose undo reproduces the
--       candidate from the kernel it came from (search/explain.lua)
--   state:evidence(result): journals a judged candidate that is not
--       followed (nothing once the budget is spent: the resumed walk
--       journals it when it judges the step whole)
--   state:lineage_text(i) -> the text of the lineage's version i
--   state.current = { source, sha256, label, version (lineage index | nil), facts }
--   result = { candidate, record, accepted, verdict, median_ms (timed),
--              effect (once measured), explained (once explained) }
--
--   opts (search.run) = { max_steps = 40, deadline, progress, llm (asked
--     for one simplification by the llm proposer: llm.simplifier) }
--   summary = { policy, workload, backend, steps = { step... }, stopped,
--               cycles (charged this session), final (label), walk (id), seconds }
--   progress events, each with step: begin { current }, candidate { index,
--     of, label }, verdict { index, of, label, verdict, median_ms }, step
--     { taken }, end { summary }
--
-- Journal records (kind "walk_step", "walk_evidence", "walk_end"), each
-- with a key so that a resumed walk writes none twice, and "walk_session"
-- records { walk, session, cycles, seconds, steps, stopped } after every
-- step and at the end: what this process's session of the walk has cost
-- so far (a session is one process; the last record of each counts), so
-- that a session killed mid-walk still shows what it spent:
--   walk_step = { walk (its id), step, from, to (sha256), source (src/...),
--     producer, verdict, effect, explained, delta, facts_before, facts_after }
--     delta: the step read the other way, simpler -> before, as a schedule
--     delta (search/schedule_delta.lua, its summary): the primitives that
--     account for what changed, or why none does; static, no gate cycle.
--     summary.schedule_deltas = { explained, total } over the steps taken.
--   llm_call = { walk, step, purpose = "simplify", charged = true, llm, verdict, message }
local explain = require "klineage.search.explain"
local facts = require "klineage.facts"
local gate = require "klineage.gate"
local proposers = require "klineage.search.proposers"
local schedule_delta = require "klineage.search.schedule_delta"
local runs = require "klineage.store.runs"
local search = require "klineage.search"
local verdicts = require "klineage.base.verdicts"
local hash = require "kl.hash"
local host = require "kl.host"

local M = {}

M.MAX_STEPS = 40
M.NONE_KEPT = "the policy stopped"
M.WHOLE_STEPS = true

local State = setmetatable({}, { __index = search.State })
State.__index = State
M.State = State

function State:lineage_text(i)
  local file = self.workload.lineage[i]
  if not self.texts[i] then
    local text, f = require("klineage.base.files").read_text(self.workload.dir .. "/" .. file)
    if not text then verdicts.raise("bad_input", f.message) end
    self.texts[i] = text
  end
  return self.texts[i]
end

function State:propose(names, node) return proposers.propose(self, names, node or self.current) end

-- Resources from the gate's compile of the kernel when it was judged (the
-- first kernel, never judged, has none: absent, not guessed).
local function facts_of(state, text, record)
  local stage = record and record.stages and record.stages.compile
  local compile = stage and stage.functions and { functions = stage.functions, arch = state.ctx.arch } or false
  local f = facts.of(text, state.workload.kernel, { workload = state.workload, arch = state.ctx.arch, compile = compile, record = record })
  if not f then return nil end
  local out = {}
  for name, v in pairs(f.values) do out[name] = v end
  return out
end

local function node_of(state, result)
  return result.candidate.node or state.current
end

function State:measure(result)
  if result.effect then return result.effect end
  if not result.accepted then
    result.effect = { measured = false, why = "not measured: the gate said " .. tostring(result.verdict) }
    return result.effect
  end
  if not self.timed then
    result.effect = { measured = false, why = "not measured: the " .. self.ctx.backend .. " backend times nothing" }
    return result.effect
  end
  local w, node = self.workload, node_of(self, result)
  local cur = { source = node.source, label = node.label, kernel = w.kernel, file = w.dir .. "/" .. node.label }
  local c, f = gate.compare(self.ctx, result.candidate, cur, w, { provenance = result.candidate.provenance })
  if not c and f.verdict == "budget_exhausted" then
    self.exhausted = true -- not measured: the resumed walk measures it
    return { measured = false, why = f.message }
  end
  if not c then
    result.effect = { measured = false, why = "the compare failed: " .. tostring(f) }
  else
    result.effect = { measured = true, speedup = c.speedup, ci = c.ci, outcome = c.outcome }
  end
  return result.effect
end

function State:explain(result)
  if result.explained then return result.explained end
  local w = self.workload
  local e = explain.step(w, node_of(self, result).source, result.candidate.source)
  local out = { explained = e.explained, how = e.how, chain = e.chain, tried = e.tried,
                partial = e.partial and e.partial.chain, partial_differing = e.partial and e.partial.differing }
  -- "The same facts" is a claim: where kernels are timed the reproduction
  -- is timed against the expert's version, and a difference takes the
  -- explanation back.
  if e.how == "same_facts" and self.timed then
    local a = { source = e.source, label = "reproduction", kernel = w.kernel, file = w.dir .. "/reproduction" }
    local c = gate.compare(self.ctx, a, result.candidate, w, {})
    out.confirm = c and { outcome = c.outcome, speedup = c.speedup, ci = c.ci } or { outcome = "failed" }
    if not c or c.outcome ~= "no_difference" then out.explained = false end
  end
  result.explained = out
  return out
end

local function keyed(state, kind, fields)
  local key = runs.key({ walk = state.id, kind = kind, step = state.step, to = fields.to })
  if state.ctx:judged(key) then return end
  fields.kind, fields.key, fields.walk, fields.step = kind, key, state.id, state.step
  state.ctx:record(fields)
end

function State:evidence(result)
  local c = result.candidate
  -- Not judged, or judged in a step the budget cut: the resumed walk journals it.
  if result.verdict == "budget_exhausted" or self.exhausted then return end
  keyed(self, "walk_evidence", { to = c.sha256, from = node_of(self, result).sha256, producer = c.provenance.producer,
                                 verdict = result.verdict, effect = result.effect, median_ms = result.median_ms,
                                 source = self.ctx:store_source(c.source) })
end

-- Candidates compile ahead in child processes (one host core each) while
-- the worker judges the current one; the gate then finds them cached. A
-- candidate the budget left unjudged has no result (state.exhausted).
function M.judge(state, judged, indices, opts)
  opts = opts or {}
  local candidates, of = {}, #judged.candidates
  for k, i in ipairs(indices) do candidates[k] = judged.candidates[i] end
  local ahead = require("klineage.device.cache").compile_ahead(candidates, state.ctx.arch)
  local records = gate.evaluate_all(state.ctx, candidates, state.workload, {
    profile = state.timed, baseline = state.baseline,
    before = function(k)
      ahead(k)
      state:emit({ kind = "candidate", index = indices[k], of = of, label = candidates[k].label })
    end,
    after = function(k, r)
      state:emit({ kind = "verdict", index = indices[k], of = of, label = candidates[k].label, verdict = r.verdict,
                   median_ms = r.stages and r.stages.profile and r.stages.profile.median_ms })
    end,
  })
  for k, i in ipairs(indices) do
    local c, r = candidates[k], records[k]
    if r.verdict == "budget_exhausted" then
      state.exhausted = true
    else
      local res = { candidate = c, record = r, accepted = r.verdict == "ok", verdict = r.verdict,
                    median_ms = r.stages.profile and r.stages.profile.median_ms }
      if res.accepted and opts.effect and not state.exhausted then state:measure(res) end
      judged.results[i] = res
    end
  end
end

function M.settle() end

-- The lineage version a kernel is, comments and layout aside (an undo that
-- gives the expert's previous version back), or nil: the walk is then at
-- that version again, and proposes its recorded step and hunks.
local function version_of(state, text)
  local norm = explain.normalized(text)
  for i = 1, #state.workload.lineage do
    state.norms[i] = state.norms[i] or explain.normalized(state:lineage_text(i))
    if state.norms[i] == norm then return i end
  end
end

-- Unkeyed: a session's cost so far (the header says how they add up).
local function session_record(state, stopped)
  state.ctx:record({ kind = "walk_session", walk = state.id, session = state.session, cycles = state.ctx:spent() - state.spent0,
                     seconds = host.clock() - state.t0, steps = #state.steps, stopped = stopped })
end

function M.take(state, kept)
  local frontier = {}
  for _, result in ipairs(kept) do
    if not result.accepted then error("policy " .. state.policy.name .. " followed a candidate the gate did not accept", 0) end
    local c, node = result.candidate, node_of(state, result)
    c.version = c.version or version_of(state, c.source)
    local after = facts_of(state, c.source, result.record)
    local w = state.workload
    -- the optimization this step removes: from the simpler kernel to the one before
    local delta = schedule_delta.summary(schedule_delta.step(c.source, node.source, { kernel = w.kernel, params = w.params }))
    local step = { step = state.step, from = node.label, to = c.label, from_sha256 = node.sha256,
                   to_sha256 = c.sha256, producer = c.provenance.producer, verdict = result.verdict,
                   effect = state:measure(result), explained = result.explained, median_ms = result.median_ms, delta = delta }
    keyed(state, "walk_step", { from = node.sha256, to = c.sha256, producer = step.producer, verdict = step.verdict,
                                effect = step.effect, explained = step.explained, median_ms = step.median_ms, delta = delta,
                                labels = { from = step.from, to = step.to }, source = state.ctx:store_source(c.source),
                                facts_before = node.facts, facts_after = after })
    state.steps[#state.steps + 1] = step
    frontier[#frontier + 1] = { source = c.source, sha256 = c.sha256, version = c.version,
                                label = c.version and c.label ~= w.lineage[c.version] and w.lineage[c.version] or c.label,
                                facts = after }
    state.visited[c.sha256] = true
    session_record(state)
    state:emit({ kind = "step", taken = step })
  end
  state.frontier, state.current = frontier, frontier[1]
end

function M.begin(state)
  state:emit({ kind = "begin", current = state.current.label })
end

function M.start(state, opts)
  local ctx, w = state.ctx, state.workload
  if type(w.lineage) ~= "table" or #w.lineage == 0 then
    return nil, verdicts.failure("bad_input", "the workload " .. tostring(w.name) .. " has no lineage to walk")
  end
  state.visited, state.texts, state.norms = {}, {}, {}
  local start = #w.lineage
  local text = state:lineage_text(start)
  state.baseline = { file = w.dir .. "/" .. w.lineage[1] }
  state.current = { source = text, sha256 = hash.sha256(text), label = w.lineage[start], version = start }
  state.current.facts = facts_of(state, text)
  state.frontier = { state.current }
  state.visited[state.current.sha256] = true
  state.id = runs.key({ workload = w.sha256, policy = state.policy.name, start = state.current.sha256, backend = ctx.backend })
  state.tag = { walk = state.id }
  state.session = runs.key({ walk = state.id, pid = require("kl.proc").getpid(), t0 = state.t0, time = os.time() })
  return true
end

function M.finish(state, stopped)
  local ctx = state.ctx
  local deltas = { explained = 0, total = #state.steps }
  for _, s in ipairs(state.steps) do if s.delta and s.delta.explained then deltas.explained = deltas.explained + 1 end end
  local summary = { policy = state.policy.name, workload = state.workload.name, backend = ctx.backend, steps = state.steps,
                    stopped = stopped, cycles = ctx:spent() - state.spent0, final = state.current.label, walk = state.id,
                    seconds = host.clock() - state.t0, schedule_deltas = deltas }
  keyed(state, "walk_end", { to = state.current.sha256, stopped = stopped, steps = #state.steps })
  session_record(state, stopped)
  state:emit({ kind = "end", summary = summary })
  return summary
end

return M
