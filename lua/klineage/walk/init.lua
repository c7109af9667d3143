-- The backward walk: from an expert kernel, one gate-validated
-- simplification at a time, each step recorded with its measured effect and
-- the facts before and after it. A policy (walk/policies/*.lua, or a
-- user's file) decides which candidates to judge and which to follow:
--
--   policy = { name, about,
--              start = function(walk) -> lineage index to start from (optional:
--                      default the last version),
--              step = function(walk) -> result to follow | nil, why it stops }
--
-- What a policy may call on `walk`:
--   walk:propose([names]) -> candidates (walk/proposers.lua: "undo",
--       "recorded", "hunks"); kernels the walk has been at are left out
--   walk:judge(candidates [, { effect = true }]) -> results, in order:
--       result = { candidate, record (the gate's), accepted = boolean,
--                  median_ms (cuda), effect (when asked, accepted only) }
--       each candidate is one gate cycle (correctness, and on cuda the
--       bench-size profile); effect = true adds one compare each
--   walk:measure(result) -> effect: the optimization's speedup, current
--       over candidate, by the interleaved compare (gate/compare.lua) with
--       its interval; on emu { measured = false, why }
--   walk:explain(result) -> the transforms whose undo reproduces the
--       candidate from the current kernel (walk/explain.lua)
--   walk:evidence(result): journals a judged candidate that is not followed
--   walk.current = { source, sha256, label, version (lineage index | nil) }
--   walk.workload, walk.ctx, walk.backend, walk.steps (taken so far), walk.step (this one)
--
--   walk.run(ctx, w, opts) -> summary | nil, failure
--     opts = { policy = table | name | path, max_steps = 40, progress = fn(event)
--              (events, each with step and budget: begin { current },
--              candidate { index, of, label }, verdict { index, of, label,
--              verdict, median_ms }, step { taken }, end { summary }),
--              deadline = a host.clock() time: no step starts after it (the
--              walk stops with "deadline", to be resumed) }
--     summary = { policy, workload, steps = { step... }, stopped = why,
--                 cycles = gate cycles charged, reused = judgements taken from
--                 the journal, seconds }
--   walk.load_policy(ref) -> policy | nil, failure
--
-- Journal records (kind "walk_step", "walk_evidence", "walk_end"), each
-- with a key so that a resumed walk writes none twice, and "walk_session"
-- records { walk, session, cycles, seconds, steps, stopped } after every
-- step and at the end: what this process's session of the walk has cost
-- so far (a session is one process; the last record of each counts), so
-- that a session killed mid-walk still shows what it spent:
--   walk_step = { walk (its id), step, from, to (sha256), source (src/...),
--     producer, verdict, effect, explained, facts_before, facts_after }
-- A walk resumes by running again on the same run folder (context resume):
-- proposers and policies are deterministic, and every judgement already
-- journaled comes back from the journal uncharged.
local explain = require "klineage.walk.explain"
local facts = require "klineage.facts"
local gate = require "klineage.gate"
local proposers = require "klineage.walk.proposers"
local runs = require "klineage.runs"
local verdicts = require "klineage.verdicts"
local hash = require "kl.hash"
local host = require "kl.host"

local M = {}

M.POLICIES = { "recorded", "greedy", "breadth" }
M.MAX_STEPS = 40

function M.load_policy(ref)
  return require("klineage.policy").load(ref, { module = "klineage.walk.policies", names = M.POLICIES, check = function(p)
    if type(p.step) ~= "function" then
      return "a walk policy returns { name = string, step = function(walk) ... } (see walk/init.lua)"
    end
  end })
end

local Walk = {}
Walk.__index = Walk

function Walk:lineage_text(i)
  local file = self.workload.lineage[i]
  if not self.texts[i] then
    local text, f = require("klineage.files").read_text(self.workload.dir .. "/" .. file)
    if not text then verdicts.raise("bad_input", f.message) end
    self.texts[i] = text
  end
  return self.texts[i]
end

function Walk:emit(event)
  event.step, event.budget = event.step or self.step, self.ctx.budget
  if self.progress then self.progress(event) end
end

function Walk:propose(names) return proposers.propose(self, names) end

-- Resources from the gate's compile of the kernel when it was judged (the
-- first kernel, never judged, has none: absent, not guessed).
local function facts_of(walk, text, record)
  local stage = record and record.stages and record.stages.compile
  local compile = stage and stage.functions and { functions = stage.functions, arch = walk.ctx.arch } or false
  local f = facts.of(text, walk.workload.kernel, { workload = walk.workload, arch = walk.ctx.arch, compile = compile, record = record })
  if not f then return nil end
  local out = {}
  for name, v in pairs(f.values) do out[name] = v end
  return out
end

-- Candidates compile ahead in child processes (one host core each) while
-- the worker judges the current one; the gate then finds them cached.
function Walk:judge(candidates, opts)
  opts = opts or {}
  local ahead = require("klineage.cache").compile_ahead(candidates, self.ctx.arch)
  local results = {}
  local records = gate.evaluate_all(self.ctx, candidates, self.workload, {
    profile = self.backend == "cuda", baseline = self.baseline,
    before = function(i)
      ahead(i)
      self:emit({ kind = "candidate", index = i, of = #candidates, label = candidates[i].label })
    end,
    after = function(i, r)
      self:emit({ kind = "verdict", index = i, of = #candidates, label = candidates[i].label, verdict = r.verdict,
                  median_ms = r.stages and r.stages.profile and r.stages.profile.median_ms })
    end,
  })
  for i, c in ipairs(candidates) do
    local r = records[i]
    local res = { candidate = c, record = r, accepted = r.verdict == "ok", verdict = r.verdict,
                  median_ms = r.stages.profile and r.stages.profile.median_ms }
    -- A step judged in part is not taken: the resumed walk judges it whole.
    if r.verdict == "budget_exhausted" then self.exhausted = true end
    if res.accepted and opts.effect and not self.exhausted then res.effect = self:measure(res) end
    results[i] = res
  end
  return results
end

function Walk:measure(result)
  if result.effect then return result.effect end
  if self.backend ~= "cuda" then
    result.effect = { measured = false, why = "not measured: the " .. self.backend .. " backend times nothing" }
    return result.effect
  end
  local cur = { source = self.current.source, label = self.current.label, kernel = self.workload.kernel,
                file = self.workload.dir .. "/" .. self.current.label }
  local c, f = gate.compare(self.ctx, result.candidate, cur, self.workload, { provenance = result.candidate.provenance })
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

function Walk:explain(result)
  if result.explained then return result.explained end
  local e = explain.step(self.workload, self.current.source, result.candidate.source)
  local out = { explained = e.explained, how = e.how, chain = e.chain, tried = e.tried,
                partial = e.partial and e.partial.chain, partial_differing = e.partial and e.partial.differing }
  -- "The same facts" is a claim: on cuda the reproduction is timed against
  -- the expert's version, and a difference takes the explanation back.
  if e.how == "same_facts" and self.backend == "cuda" then
    local a = { source = e.source, label = "reproduction", kernel = self.workload.kernel, file = self.workload.dir .. "/reproduction" }
    local c = gate.compare(self.ctx, a, result.candidate, self.workload, {})
    out.confirm = c and { outcome = c.outcome, speedup = c.speedup, ci = c.ci } or { outcome = "failed" }
    if not c or c.outcome ~= "no_difference" then out.explained = false end
  end
  result.explained = out
  return out
end

local function keyed(walk, kind, fields)
  local key = runs.key({ walk = walk.id, kind = kind, step = walk.step, to = fields.to })
  if walk.ctx:judged(key) then return end
  fields.kind, fields.key, fields.walk, fields.step = kind, key, walk.id, walk.step
  walk.ctx:record(fields)
end

function Walk:evidence(result)
  local c = result.candidate
  if result.verdict == "budget_exhausted" then return end -- not judged: the resumed walk judges it
  keyed(self, "walk_evidence", { to = c.sha256, from = self.current.sha256, producer = c.provenance.producer,
                                 verdict = result.verdict, effect = result.effect, median_ms = result.median_ms,
                                 source = self.ctx:store_source(c.source) })
end

-- The lineage version a kernel is, comments and layout aside (an undo that
-- gives the expert's previous version back), or nil: the walk is then at
-- that version again, and proposes its recorded step and hunks.
local function version_of(walk, text)
  local norm = explain.normalized(text)
  for i = 1, #walk.workload.lineage do
    walk.norms[i] = walk.norms[i] or explain.normalized(walk:lineage_text(i))
    if walk.norms[i] == norm then return i end
  end
end

local function take(walk, result)
  local c = result.candidate
  c.version = c.version or version_of(walk, c.source)
  local after = facts_of(walk, c.source, result.record)
  local step = { step = walk.step, from = walk.current.label, to = c.label, from_sha256 = walk.current.sha256,
                 to_sha256 = c.sha256, producer = c.provenance.producer, verdict = result.verdict,
                 effect = walk:measure(result), explained = result.explained, median_ms = result.median_ms }
  keyed(walk, "walk_step", { from = walk.current.sha256, to = c.sha256, producer = step.producer, verdict = step.verdict,
                             effect = step.effect, explained = step.explained, median_ms = step.median_ms,
                             labels = { from = step.from, to = step.to }, source = walk.ctx:store_source(c.source),
                             facts_before = walk.current.facts, facts_after = after })
  walk.steps[#walk.steps + 1] = step
  walk.current = { source = c.source, sha256 = c.sha256, version = c.version,
                   label = c.version and c.label ~= walk.workload.lineage[c.version] and walk.workload.lineage[c.version] or c.label,
                   facts = after }
  walk.visited[c.sha256] = true
  walk:session_record()
  walk:emit({ kind = "step", taken = step })
end

-- Unkeyed: a session's cost so far (the header says how they add up).
function Walk:session_record(stopped)
  self.ctx:record({ kind = "walk_session", walk = self.id, session = self.session, cycles = self.ctx.budget.used - self.used0,
                    seconds = host.clock() - self.t0, steps = #self.steps, stopped = stopped })
end

function M.run(ctx, w, opts)
  gate.check_context(ctx, "walk.run")
  opts = opts or {}
  local policy, pf = M.load_policy(opts.policy or "greedy")
  if not policy then return nil, pf end
  local self = setmetatable({ ctx = ctx, workload = w, backend = ctx.backend, steps = {}, visited = {}, texts = {}, norms = {},
                              progress = opts.progress, step = 0, llm = opts.llm }, Walk)
  local start = policy.start and policy.start(self) or #w.lineage
  if math.type(start) ~= "integer" or start < 1 or start > #w.lineage then
    return nil, verdicts.failure("bad_input", string.format("policy %s: start must be a lineage index 1..%d", policy.name, #w.lineage))
  end
  local text = self:lineage_text(start)
  self.baseline = { file = w.dir .. "/" .. w.lineage[1] }
  self.current = { source = text, sha256 = hash.sha256(text), label = w.lineage[start], version = start }
  self.current.facts = facts_of(self, text)
  self.visited[self.current.sha256] = true
  self.id = runs.key({ workload = w.sha256, policy = policy.name, start = self.current.sha256, backend = ctx.backend })
  local t0, used0 = host.clock(), ctx.budget.used
  self.t0, self.used0 = t0, used0
  self.session = runs.key({ walk = self.id, pid = require("kl.proc").getpid(), t0 = t0, time = os.time() })
  local max_steps = opts.max_steps or M.MAX_STEPS
  local stopped
  while true do
    if #self.steps >= max_steps then stopped = "the step limit (" .. max_steps .. ")"; break end
    if ctx.budget.limit and ctx.budget.used >= ctx.budget.limit then stopped = "budget_exhausted"; break end
    if opts.deadline and host.clock() >= opts.deadline then stopped = "deadline"; break end
    self.step = #self.steps + 1
    self:emit({ kind = "begin", current = self.current.label })
    local result, why = policy.step(self)
    if self.exhausted then stopped = "budget_exhausted"; break end
    if not result then stopped = why or "the policy stopped"; break end
    if not result.accepted then error("policy " .. policy.name .. " followed a candidate the gate did not accept", 0) end
    take(self, result)
  end
  local summary = { policy = policy.name, workload = w.name, backend = ctx.backend, steps = self.steps, stopped = stopped,
                    cycles = ctx.budget.used - used0, final = self.current.label, walk = self.id,
                    seconds = host.clock() - t0 }
  keyed(self, "walk_end", { to = self.current.sha256, stopped = stopped, steps = #self.steps })
  self:session_record(stopped)
  self:emit({ kind = "end", summary = summary })
  return summary
end

return M
