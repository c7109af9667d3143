-- The orchestrator: a user's kernel optimized with the skills, under the
-- gate and the run's counted budget. The input kernel is the correctness
-- reference of every candidate (never a candidate itself), and a candidate
-- is accepted only when the gate passes it and, on cuda, the interleaved
-- compare finds it faster than the current kernel beyond noise. On a
-- backend that times nothing (emu) a correct candidate is accepted on its
-- skill's measured evidence, and every decision says that no effect was
-- measured.
--
-- The loop (agent.optimize), each step a function of the policy
-- (agent/policies/klineage.lua), with the defaults of agent/steps.lua:
--   1. gate the input (its facts: static, resources, one profile on cuda)
--   2. candidates(agent) -> rows      skills whose pattern matches a site,
--      whose preconditions hold and whose guards do not fire (the others
--      are journaled as skipped, with what blocked them)
--   3. rank(agent, rows) -> rows      best first
--   4. materialize(agent, row) -> { source, params } | nil, why
--   5. the gate, then the compare (agent:judge)
--   6. accept(agent, row, result) -> true | false, why; on false the next row
--   7. after an acceptance the facts are those of the new kernel
--   8. stop at the budget, or when no row is left
--
--   agent.optimize(ctx, w, input, opts) -> summary | nil, failure
--     input = { source, label, file }
--     opts = { skills = { record... }, policy = table | name | path,
--              llm = function(request) -> source | nil, failure (optional),
--              progress = fn(event), max_steps = 20,
--              seed (a randomized policy's: agent.seed), memory (what a
--              memory-based policy retrieves from: agent.memory) }
--     A policy may also say keep = "best" (judge every row of a step, keep
--     the fastest accepted; the default "first" keeps the first accepted)
--     and needs_llm = true (without opts.llm the run fails at once with
--     the verdict llm_unavailable, before any cycle), needs_memory = true
--     (without opts.memory: bad_input, before any cycle).
--     summary = { policy, steps = { step... }, final = { source, sha256, label },
--                 stopped, cycles, decisions = n, backend, measured = bool }
--
-- Journal records, each keyed so that a resumed run writes none twice:
--   decision = { kind = "decision", step, kernel (current sha256), skill,
--     site, params, status = "applied" | "rejected" | "skipped" |
--     "not_materialized", why (English), because = { text... } (the
--     conditions that admitted it, with the facts' values), verdict,
--     effect, candidate (sha256), source (src/...), by = "transform" |
--     "template" | "llm", llm = the LLM call's record (klineage.llm: no
--     key, no answer text), charged = true when an unusable LLM answer
--     cost a cycle }
--   optimize_step = { kind = "optimize_step", step, from, to, skill, site,
--     params, effect, source }
--   optimize_end = { kind = "optimize_end", stopped, steps, final, source,
--     policy (its name), seed (a randomized policy's) }
local gate = require "klineage.gate"
local runs = require "klineage.runs"
local verdicts = require "klineage.verdicts"
local hash = require "kl.hash"
local host = require "kl.host"

local M = {}

M.POLICIES = { "klineage", "klineage_explore" }
M.MAX_STEPS = 20

local CALLBACKS = { "candidates", "rank", "materialize", "accept" }

-- The baselines (lua/klineage/baselines/), policies like the others: the
-- evaluation runs them under the same gate and budget.
M.BASELINES = { "forward", "random", "memory", "llm-only" }

local function check_policy(p)
  for _, name in ipairs(CALLBACKS) do
    if p[name] ~= nil and type(p[name]) ~= "function" then return name .. " must be a function" end
  end
  if p.keep ~= nil and p.keep ~= "first" and p.keep ~= "best" then return "keep must be \"first\" or \"best\"" end
end

function M.load_policy(ref)
  for _, name in ipairs(M.BASELINES) do
    if ref == name then
      return require("klineage.policy").load((name:gsub("%-", "_")), { module = "klineage.baselines", names = M.BASELINES,
                                                                        check = check_policy })
    end
  end
  return require("klineage.policy").load(ref, { module = "klineage.agent.policies", names = M.POLICIES, check = check_policy })
end

local Agent = {}
Agent.__index = Agent

function Agent:emit(event)
  event.step, event.budget = event.step or self.step, self.ctx.budget
  if self.progress then self.progress(event) end
end

-- The current kernel's facts (with its gate record's profile facts),
-- computed once per kernel: candidates and the LLM's prompt both read them.
-- An empty table when they cannot be computed.
function Agent:facts()
  local cur = self.current
  if cur.facts == nil then
    local f = require("klineage.facts").of(cur.source, self.workload.kernel,
      { workload = self.workload, arch = self.ctx.arch, record = cur.record })
    cur.facts = f and f.values or {}
  end
  return cur.facts
end

local function keyed(agent, kind, fields)
  local key = runs.key({ optimize = agent.id, kind = kind, step = agent.step, kernel = agent.current.sha256,
                         skill = fields.skill, site = fields.site, params = fields.params, status = fields.status })
  if agent.ctx:judged(key) then return end
  fields.kind, fields.key, fields.step = kind, key, agent.step
  agent.ctx:record(fields)
end

function Agent:decide(row, fields)
  fields.skill, fields.site, fields.params = row.skill, row.site, row.params
  fields.kernel = self.current.sha256
  keyed(self, "decision", fields)
  self.decisions = self.decisions + 1
  self:emit({ kind = "decision", skill = row.skill, status = fields.status, why = fields.why })
end

-- The gate (correctness against the input, the profile on cuda), then on
-- cuda the compare against the current kernel. result = { record,
-- verdict, effect = { measured, speedup, ci, outcome | why } }
function Agent:judge(source, provenance, label)
  local cand = { source = source, label = label, kernel = self.workload.kernel,
                 file = self.workload.dir .. "/" .. label, provenance = provenance }
  local record = gate.evaluate(self.ctx, cand, self.workload, { baseline = self.reference, profile = self.backend == "cuda" })
  local result = { record = record, verdict = record.verdict, candidate = cand }
  if record.verdict ~= "ok" then return result end
  if self.backend ~= "cuda" then
    result.effect = { measured = false, why = "not measured: the " .. self.backend .. " backend times nothing" }
    return result
  end
  local cur = { source = self.current.source, label = self.current.label, kernel = self.workload.kernel,
                file = self.workload.dir .. "/" .. self.current.label }
  local c, f = gate.compare(self.ctx, cur, cand, self.workload, { provenance = provenance })
  if not c then
    result.effect = { measured = false, why = "the compare failed: " .. tostring(f) }
    if f.verdict == "budget_exhausted" then result.verdict = "budget_exhausted" end
  else
    result.effect = { measured = true, speedup = c.speedup, ci = c.ci, outcome = c.outcome }
  end
  return result
end

local function take(agent, row, made, result)
  local sha = hash.sha256(made.source)
  local label = string.format("step %d: %s", agent.step, row.skill)
  local source = agent.ctx:store_source(made.source)
  keyed(agent, "optimize_step", { from = agent.current.sha256, to = sha, skill = row.skill, site = row.site,
                                  params = made.params, effect = result.effect, source = source })
  agent.steps[#agent.steps + 1] = { step = agent.step, skill = row.skill, site = row.site, params = made.params,
                                    effect = result.effect, from = agent.current.sha256, to = sha }
  agent.current = { source = made.source, sha256 = sha, label = label, record = result.record }
  agent:emit({ kind = "step", skill = row.skill, effect = result.effect })
end

-- One step: the ranked rows tried in order until one is accepted (keep =
-- "first", the default), or every row judged within the budget and the
-- accepted one with the best measured speedup kept (keep = "best": on a
-- backend that times nothing, the first accepted). Returns true when one
-- was kept, else nil and why the loop stops.
local function step(agent, policy, steps)
  local rows = (policy.candidates or steps.candidates)(agent)
  if #rows == 0 then return nil, "no candidate left" end
  rows = (policy.rank or steps.rank)(agent, rows)
  local best_mode, best, stop = policy.keep == "best", nil, nil
  local accepted = {}
  for _, row in ipairs(rows) do
    if agent.ctx.budget.limit and agent.ctx.budget.used >= agent.ctx.budget.limit then stop = "budget_exhausted" break end
    local made, why, asked = (policy.materialize or steps.materialize)(agent, row)
    if not made then
      -- An LLM asked for nothing usable is a counted cycle (the budget is the engine's).
      if asked and asked.llm and not agent.ctx:charge() then stop = "budget_exhausted" break end
      agent:decide(row, { status = "not_materialized", why = why, llm = asked and asked.llm, verdict = asked and asked.verdict,
                          charged = asked and asked.llm and true or nil })
    else
      local provenance = { parent = agent.current.sha256,
                           producer = { kind = "skill", name = row.skill, edit = row.site, params = made.params, by = made.by } }
      agent:emit({ kind = "judging", skill = row.skill, by = made.by })
      local result = agent:judge(made.source, provenance, string.format("%s at %s", row.skill, tostring(row.site)))
      if result.verdict == "budget_exhausted" then stop = "budget_exhausted" break end
      local ok, reason = (policy.accept or steps.accept)(agent, row, result)
      local fields = { status = ok and "applied" or "rejected", why = reason, because = row.because,
                       verdict = result.verdict, effect = result.effect, candidate = hash.sha256(made.source),
                       source = agent.ctx:store_source(made.source), by = made.by, llm = made.llm }
      agent.tried[agent.current.sha256 .. "|" .. row.skill .. "|" .. tostring(row.site) .. "|" .. tostring(row.params_key)] = true
      if ok and best_mode then
        accepted[#accepted + 1] = { row = row, made = made, result = result, fields = fields }
        local e = result.effect
        if not best or (e.measured and best.result.effect.measured and e.speedup > best.result.effect.speedup) then
          best = accepted[#accepted]
        end
      else
        agent:decide(row, fields)
        if ok then
          take(agent, row, made, result)
          return true
        end
      end
    end
  end
  -- keep = "best": every accepted row is journaled; the others than the kept one say what beat them.
  for _, a in ipairs(accepted) do
    if a ~= best then
      a.fields.status = "rejected"
      local kept = best.row.skill .. " at " .. tostring(best.row.site)
      a.fields.why = a.fields.why .. "; not kept: " .. (best.result.effect.measured and (kept .. " did better")
        or (kept .. " was accepted first, and " .. agent.backend .. " times nothing to choose between them"))
    end
    agent:decide(a.row, a.fields)
  end
  if best then
    take(agent, best.row, best.made, best.result)
    return true
  end
  return nil, stop or "no candidate left that the gate accepted (the rest were rejected or could not be materialized)"
end

function M.optimize(ctx, w, input, opts)
  gate.check_context(ctx, "agent.optimize")
  opts = opts or {}
  local policy, pf = M.load_policy(opts.policy or "klineage")
  if not policy then return nil, pf end
  if type(input) ~= "table" or type(input.source) ~= "string" then
    error("agent.optimize: input = { source, label } expected", 2)
  end
  if policy.needs_llm and not opts.llm then
    return nil, verdicts.failure("llm_unavailable", "no provider: the " .. policy.name .. " policy needs --llm")
  end
  if policy.needs_memory and not (type(opts.memory) == "table" and #opts.memory > 0) then
    return nil, verdicts.failure("bad_input", "no memory: the " .. policy.name
      .. " policy replays past trajectories, and none were given (eval: --learn-from WALK_RUN)")
  end
  local steps = require "klineage.agent.steps"
  local label = input.label or "input.cu"
  local sha = hash.sha256(input.source)
  local self = setmetatable({ ctx = ctx, workload = w, backend = ctx.backend, skills = opts.skills or {}, llm = opts.llm,
                              seed = opts.seed, memory = opts.memory,
                              steps = {}, tried = {}, decisions = 0, step = 0, progress = opts.progress,
                              reference = { source = input.source, label = label, kernel = w.kernel,
                                            file = input.file or (w.dir .. "/" .. label) } }, Agent)
  self.id = runs.key({ optimize = sha, workload = w.sha256, policy = policy.name, backend = ctx.backend, seed = opts.seed })
  local t0, used0 = host.clock(), ctx.budget.used
  -- 1. The input through the gate, as the reference of itself: it is the
  -- definition of correct here (the spec's C reference, when it has one,
  -- checks it first).
  self:emit({ kind = "baseline", label = label })
  local base = gate.evaluate(ctx, self.reference, w, { baseline = self.reference, profile = self.backend == "cuda" })
  if base.verdict ~= "ok" then
    return nil, verdicts.failure(base.verdict == "budget_exhausted" and "budget_exhausted" or "baseline_broken",
      string.format("the input kernel did not pass the gate (%s): %s", base.verdict, tostring(base.message or
        (base.stages.compile and base.stages.compile.message) or "see the journal")))
  end
  self.current = { source = input.source, sha256 = sha, label = label, record = base }
  local stopped
  local max_steps = opts.max_steps or M.MAX_STEPS
  while true do
    if #self.steps >= max_steps then stopped = "the step limit (" .. max_steps .. ")" break end
    if ctx.budget.limit and ctx.budget.used >= ctx.budget.limit then stopped = "budget_exhausted" break end
    self.step = #self.steps + 1
    local ok, why = step(self, policy, steps)
    if not ok then stopped = why break end
  end
  keyed(self, "optimize_end", { stopped = stopped, steps = #self.steps, final = self.current.sha256,
                                policy = policy.name, seed = opts.seed,
                                source = ctx:store_source(self.current.source) })
  local summary = { policy = policy.name, steps = self.steps, stopped = stopped, cycles = ctx.budget.used - used0,
                    decisions = self.decisions, backend = ctx.backend, measured = ctx.backend == "cuda",
                    final = { source = self.current.source, sha256 = self.current.sha256, label = self.current.label },
                    seconds = host.clock() - t0 }
  self:emit({ kind = "end", summary = summary })
  return summary
end

return M
