-- The search: one session loop for every policy. A search is backward (a
-- walk: from an expert kernel, one gate-validated simplification a step,
-- search/backward.lua) or forward (an optimization: from a user's kernel,
-- one kept improvement a step, search/forward.lua). The session owns what
-- no policy should hold: the frontier (the kernels the search is at), the
-- budget (the engine charges every gate cycle and every LLM call made
-- through the state), the journal and resume. A policy only asks and is
-- told, as TVM MetaSchedule's search strategies are:
--
--   policy = {
--     name, about,
--     direction = "backward" | "forward",
--     seeded = true          (optional) its choices follow state.seed:
--                            `klineage eval` runs it once per seed
--     needs = { "llm", "memory" }   (optional) without them the run is
--                            refused before any cycle (llm_unavailable,
--                            bad_input); eval says "not run" for llm
--     propose = function(state) -> candidates | nil, why
--     choose = function(state, judged) -> kept... | nil, why
--   }
--
-- Each step the policy proposes candidates from the frontier, the engine
-- judges them as choose reads `judged`, and whatever choose returns becomes
-- the next frontier (state.frontier, best first; state.current is its
-- first). nil stops the search with why. The built-in policies are the
-- files of search/policies/, found by their folder; a user's is any file
-- that returns such a table (examples/policies/).
--
-- judged: the candidates' results, judged lazily, in order
--   judged[i]         the result of candidate i, judged when first read;
--                     nil past the last one, or once the budget is spent
--                     (ipairs(judged) stops there)
--   #judged           the number of candidates
--   judged:first()    the first accepted result, judging no further | nil
--   judged:all([{ effect = true }])  every result, judged together (a
--                     backward search spreads them over the pool's
--                     workers); effect: each accepted one also measured
--   judged:fastest()  every result judged; the accepted one with the best
--                     measured speedup (the first accepted when nothing is
--                     timed) | nil
--   result = { candidate, accepted = boolean, verdict, record (the gate's),
--              effect = { measured, speedup, ci, outcome | why } (forward:
--              always, gate.judge's; backward: once state:measure), why (the
--              engine's words for it), speedup (forward, measured: the
--              kernel's over the input) }
--
-- state (both directions; each adds its own, documented in its file):
--   state.frontier, state.current, state.step (this step's number),
--   state.steps (taken so far), state.workload, state.ctx, state.timed
--   (ctx.timed: a compare can keep a change), state.seed, state.policy,
--   state.exhausted (the budget ran out during this step)
--   state:ask_llm(request, purpose) -> text, call | nil, failure: the
--       run's LLM (opts.llm), one charged cycle, journaled as an llm_call
--       record; without a cycle left nothing is asked (budget_exhausted)
--   state:random(n) -> 1..n: xorshift32 from state.seed (1 when none), the
--       same numbers on every Lua build, so a resumed run chooses the same
--
--   search.run(ctx, w, opts) -> summary | nil, failure
--     opts = { policy = table | name | path, direction (the command's: a
--              policy of the other is refused), max_steps, progress =
--              fn(event), deadline = a host.clock() time (no step starts
--              after it: stopped "deadline"), seed, llm = function(request)
--              -> text, call | nil, failure, and the direction's own
--              (input, skills, memory: forward.lua) }
--     Every step is journaled with a key, so a run resumed on its run
--     folder (context resume) writes nothing twice and every judgement
--     comes back from the journal uncharged: policies are deterministic
--     given their seed. A resumed run asks an LLM again (--llm replay
--     answers the same).
--   search.load_policy(ref [, direction]) -> policy | nil, failure (bad_input)
--   search.policies([direction]) -> the built-in names, sorted
--   search.missing(policy, { llm = bool, memory = bool }) -> failure | nil
local gate = require "klineage.gate"
local verdicts = require "klineage.base.verdicts"
local host = require "kl.host"

local M = {}

M.DIRECTIONS = { backward = "klineage.search.backward", forward = "klineage.search.forward" }
M.DEFAULT = { backward = "greedy", forward = "klineage" }
M.NEEDS = {
  llm = { have = "llm", verdict = "llm_unavailable", why = "no provider: the %s policy needs --llm" },
  memory = { have = "memory", verdict = "bad_input",
             why = "no memory: the %s policy replays past trajectories, and none were given (eval: --learn-from WALK_RUN)" },
}

-- The built-in policies: every file of search/policies/, by its name and
-- by its file's stem (llm_only.lua is "llm-only").
local index
local function builtins()
  if not index then
    index = { names = {}, by = {} }
    local dir = (host.home or ".") .. "/lua/klineage/search/policies"
    local list = require("kl.fs").list(dir) or {}
    table.sort(list)
    for _, file in ipairs(list) do
      local stem = file:match("^([%w_]+)%.lua$")
      if stem then
        local module = "klineage.search.policies." .. stem
        local p = require(module)
        index.by[p.name], index.by[stem] = module, module
        index.names[#index.names + 1] = { name = p.name, direction = p.direction }
      end
    end
  end
  return index
end

function M.policies(direction)
  local out = {}
  for _, p in ipairs(builtins().names) do
    if not direction or p.direction == direction then out[#out + 1] = p.name end
  end
  table.sort(out)
  return out
end

local function check(p)
  if type(p) ~= "table" then return "it did not return a table" end
  if type(p.name) ~= "string" then return "it has no name" end
  if not M.DIRECTIONS[p.direction] then return "direction must be \"backward\" or \"forward\"" end
  for _, f in ipairs({ "propose", "choose" }) do
    if type(p[f]) ~= "function" then return f .. " must be a function" end
  end
  if p.seeded ~= nil and type(p.seeded) ~= "boolean" then return "seeded must be true or false" end
  if p.needs ~= nil and type(p.needs) ~= "table" then return "needs must be a list (\"llm\", \"memory\")" end
  for _, n in ipairs(p.needs or {}) do
    if not M.NEEDS[n] then return "needs: unknown need '" .. tostring(n) .. "' (llm, memory)" end
  end
end

function M.load_policy(ref, direction)
  local p
  local module = type(ref) == "string" and builtins().by[ref]
  if type(ref) == "table" then
    p = ref
  elseif module then
    p = require(module)
  elseif type(ref) == "string" and ref:match("^[%w_%-]+$") then
    return nil, verdicts.failure("bad_input", string.format("no policy named '%s' (built in: %s; or give a .lua file)",
      ref, table.concat(M.policies(direction), ", ")))
  else
    -- read as every file is (klineage.base.files): a FIFO or a device is refused, not waited on
    local chunk, f = require("klineage.base.files").load_lua(tostring(ref), "a policy file")
    if not chunk then return nil, verdicts.failure("bad_input", "cannot load the policy: " .. f.message) end
    local ok, mod = pcall(chunk)
    if not ok then return nil, verdicts.failure("bad_input", "the policy raised while loading: " .. tostring(mod)) end
    p = mod
  end
  local wrong = check(p)
  if wrong then return nil, verdicts.failure("bad_input", "not a policy: " .. wrong .. " (see lua/klineage/search/init.lua)") end
  if direction and p.direction ~= direction then
    return nil, verdicts.failure("bad_input", string.format("the policy %s searches %s; here a %s policy is needed (built in: %s)",
      p.name, p.direction, direction, table.concat(M.policies(direction), ", ")))
  end
  return p
end

function M.missing(policy, have)
  for _, n in ipairs(policy.needs or {}) do
    local need = M.NEEDS[n]
    if not have[need.have] then return verdicts.failure(need.verdict, string.format(need.why, policy.name)) end
  end
end

-- What every state has; a direction's methods come first (search/forward.lua,
-- search/backward.lua).
local State = {}
M.State = State

function State:emit(event)
  event.step = event.step or self.step
  if self.progress then self.progress(event) end
end

function State:ask_llm(request, purpose)
  if not self.llm then return nil, verdicts.failure("llm_unavailable", "no LLM provider is configured (--llm)") end
  local paid, bf = self.ctx:charge()
  if not paid then
    self.exhausted = true
    return nil, bf
  end
  local text, call = self.llm(request)
  -- Every call is journaled, an unusable answer too: what the LLM cost is part of the run.
  local record = require("klineage.llm").journal_fields("llm_call", text, call)
  record.charged, record.step, record.purpose = true, self.step, purpose
  for k, v in pairs(self.tag) do record[k] = v end
  self.ctx:record(record)
  return text, call
end

function State:random(n)
  local x = self.random_state or ((self.seed or 1) * 2654435761 % 0xffffffff + 1)
  x = x ~ ((x << 13) & 0xffffffff)
  x = x ~ (x >> 17)
  x = x ~ ((x << 5) & 0xffffffff)
  self.random_state = x
  return x % n + 1
end

-- The lazy sequence of results. A direction judges candidates by index:
-- kind.judge(state, judged, indices [, opts]) fills judged.results[i]
-- (nil where the budget ran out, which sets state.exhausted).
local Judged = {}

local function judge_one(self, i)
  local r = self.results[i]
  if r or i < 1 or i > #self.candidates or self.state.exhausted then return r end
  self.kind.judge(self.state, self, { i })
  r = self.results[i]
  if r then self.order[#self.order + 1] = i end
  return r
end

local meta = {
  __index = function(self, k)
    if math.type(k) == "integer" then return judge_one(self, k) end
    return Judged[k]
  end,
  __len = function(self) return #self.candidates end,
}

function Judged:first()
  for _, r in ipairs(self) do
    if r.accepted then return r end
  end
end

function Judged:all(opts)
  local todo = {}
  for i = 1, #self.candidates do
    if not self.results[i] then todo[#todo + 1] = i end
  end
  if #todo > 0 and not self.state.exhausted then
    self.kind.judge(self.state, self, todo, opts)
    for _, i in ipairs(todo) do
      if self.results[i] then self.order[#self.order + 1] = i end
    end
  end
  local out = {}
  for i = 1, #self.candidates do
    if self.results[i] then out[#out + 1] = self.results[i] end
  end
  return out
end

function Judged:fastest()
  local best
  for _, r in ipairs(self:all()) do
    if r.accepted then
      local e, b = r.effect or {}, best and best.effect or {}
      if not best or (e.measured and b.measured and e.speedup > b.speedup) then best = r end
    end
  end
  return best
end

-- The results in the order they were judged (the journal's order).
function Judged:in_judged_order()
  local out = {}
  for _, i in ipairs(self.order) do out[#out + 1] = self.results[i] end
  return out
end

local function judged_of(state, kind, candidates)
  return setmetatable({ state = state, kind = kind, candidates = candidates, results = {}, order = {} }, meta)
end

-- choose's answer: the kept results, or none and why.
local function kept_of(...)
  local n = select("#", ...)
  local first, second = ...
  if first == nil then return {}, second end
  local kept = {}
  for i = 1, n do
    local r = select(i, ...)
    if r ~= nil then kept[#kept + 1] = r end
  end
  return kept
end

function M.run(ctx, w, opts)
  gate.check_context(ctx, "search.run")
  opts = opts or {}
  local policy, pf = M.load_policy(opts.policy or M.DEFAULT[opts.direction or "forward"], opts.direction)
  if not policy then return nil, pf end
  local missing = M.missing(policy, { llm = opts.llm ~= nil, memory = type(opts.memory) == "table" and #opts.memory > 0 })
  if missing then return nil, missing end
  local kind = require(M.DIRECTIONS[policy.direction])
  local state = setmetatable({ ctx = ctx, workload = w, policy = policy, timed = ctx.timed, seed = opts.seed, llm = opts.llm,
                               progress = opts.progress, step = 0, steps = {}, tag = {} }, kind.State)
  local t0, spent0 = host.clock(), ctx:spent()
  state.t0, state.spent0 = t0, spent0
  local ok, f = kind.start(state, opts)
  if not ok then return nil, f end
  local max_steps = opts.max_steps or kind.MAX_STEPS
  local taken, stopped = 0, nil
  while true do
    if taken >= max_steps then stopped = "the step limit (" .. max_steps .. ")" break end
    if ctx:exhausted() then stopped = "budget_exhausted" break end
    if opts.deadline and host.clock() >= opts.deadline then stopped = "deadline" break end
    state.step, state.exhausted = taken + 1, false
    if kind.begin then kind.begin(state) end
    local candidates, why = policy.propose(state)
    if state.exhausted then stopped = "budget_exhausted" break end
    if not candidates or #candidates == 0 then stopped = why or "no candidate left" break end
    local judged = judged_of(state, kind, candidates)
    local kept, none = kept_of(policy.choose(state, judged))
    -- A backward step judged in part is not taken: the resumed walk judges it whole.
    if state.exhausted and kind.WHOLE_STEPS then stopped = "budget_exhausted" break end
    kind.settle(state, judged, kept)
    if #kept == 0 then stopped = state.exhausted and "budget_exhausted" or none or kind.NONE_KEPT break end
    kind.take(state, kept)
    taken = taken + 1
  end
  return kind.finish(state, stopped)
end

return M
