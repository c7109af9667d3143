-- The run context: one object per command or script, holding what every
-- gate call needs and no caller should derive again: the worker pool, the
-- backend, the arch compiles target, the ceilings, the run folder with its
-- journal, and the budget. The gate draws its defaults from it (emu checks
-- the test sizes only and times nothing; the pool's timeout holds) and
-- charges every cycle to its budget.
--
--   context.new(opts) -> ctx | nil, failure
--     opts = {
--       backend  = "cuda" | "emu" | "fake"   default: cuda where a GPU answers, else emu
--       pool     = an existing worker pool (its backend is the context's)
--       timeout  = seconds a worker request may take (default: the pool's, 120 s)
--       journal  = false (no run folder) | the runs root (default: runs.root())
--       resume   = a run id or run folder: append to it, reuse its judgements
--       run_id   = the id of a new run folder (default: a fresh one)
--       budget   = gate cycles the run may spend (default: no limit)
--       command  = argv, for the run record
--       workloads = { w, ... }: their spec hashes go into the run record
--       arch     = the compile target (default: the first device's; sm_90 on emu)
--       sizes    = "test" | "all" (default: "test" on emu, where bench sizes take hours)
--       ceilings = a table, or false for none (default: measured on cuda when first needed)
--       compile_limit = seconds each compile may take, NVRTC and emu's host
--                  compiler alike (default: cache.TIME_LIMIT, 120); past
--                  it the compile is stopped: verdict compile_timeout
--       skills   = the skill repository's folder (--skills; default
--                  skills/<arch> of the home, so the arch chooses it)
--       baseline_store = false (keep no baseline outputs on disk) | a
--                  folder (default: the emu cache's; emu only:
--                  gate/baseline_store.lua)
--     }
--   ctx.backend, ctx.why (why that backend), ctx.pool, ctx.arch, ctx.sizes,
--   ctx.run (a runs.Run, or nil), ctx.compile_limit
--   ctx.timed: the backend's times are a kernel's (a compare can keep a
--       change; an effect is measured); ctx.profiles: the gate's profile
--       stage runs (klineage.device.backends.traits: nobody compares names)
--   ctx:ceilings() -> c | nil [, failure]   (measured once, on cuda only)
--   The budget, counted here and nowhere else: every gate cycle (gate/,
--   the compare) and every LLM call the search makes is one cycle.
--   ctx:charge() -> true | nil, failure (budget_exhausted): one cycle
--   ctx:exhausted() -> true when no cycle is left at this point of the run
--   ctx:spent() -> cycles charged (a resumed run's journal included), limit | nil
--   ctx:replayed(record): a judgement the journal already held was read
--       back (the gate calls it). A resumed run walks its budget again as
--       it replays: exhausted() counts the cycles replayed or charged in
--       this process, so a run that ended on its budget replays to the same
--       end, while charge() still refuses once the folder's cycles, the
--       journal's and the new ones, reach the limit.
--   context.check_budget(n [, min]) -> true | nil, failure (bad_input): a
--       budget a command may pass (a whole number >= min, default 0)
--   ctx.skills_dir: the skill repository's folder the run was given
--       (nil: skills/<arch> of the home); klineage.skills.store.of_context
--       loads it, since the device layer knows no skill
--   ctx:judged(key) -> the record of an earlier judgement with this key | nil
--   ctx:record(record) -> record: appended to the journal (raises an
--       io_error failure when the journal cannot take it; the failure's
--       field `record` is the record that was judged and not journaled)
--   ctx:store_source(text) -> the text's path relative to the run folder
--       (src/<sha256>.cu), or nil with no run folder
--   ctx:reference_pool() -> pool | nil, failure   where workloads' C
--       references run (gate/reference.lua): the context's own pool on emu,
--       else an emu pool started on first use and closed by ctx:close()
--   ctx.reference_checks = { [key] = stage }: the C reference checks this
--       context has made (gate/reference.lua keys and fills it)
--   ctx:close()   the pools (unless given) and the journal
local backends = require "klineage.device.backends"
local runs = require "klineage.store.runs"
local verdicts = require "klineage.base.verdicts"
local host = require "kl.host"

local M = {}

local Context = {}
Context.__index = Context

local function versions()
  local nvrtc = require "kl.nvrtc"
  return { klineage = host.version, nvrtc = table.concat({ nvrtc.version() }, "."), cupti = require("kl.cupti").version() }
end

function M.check_budget(n, min)
  min = min or 0
  if math.type(n) ~= "integer" or n < min then
    return nil, verdicts.failure("bad_input", string.format("the budget must be a whole number of gate cycles >= %d, got %s", min,
      tostring(n)))
  end
  return true
end

function M.new(opts)
  opts = opts or {}
  -- The budget's two numbers are this object's own: read through spent().
  local self = setmetatable({ cycle_limit = opts.budget, cycles_used = 0, position = 0, own_pool = false, skills_dir = opts.skills,
                              reference_checks = {}, baseline_store = opts.baseline_store }, Context)
  if opts.budget ~= nil then
    local ok, bf = M.check_budget(opts.budget)
    if not ok then return nil, bf end
  end
  if opts.pool then
    self.pool, self.backend = opts.pool, opts.pool.backend
  else
    local pool, backend, why = backends.pool(opts.backend, { timeout = opts.timeout })
    if not pool then return nil, backend end
    self.pool, self.backend, self.why, self.own_pool = pool, backend, why, true
  end
  self.timeout = opts.timeout or self.pool.timeout
  if opts.compile_limit ~= nil and (type(opts.compile_limit) ~= "number" or not (opts.compile_limit > 0)) then
    if self.own_pool then self.pool:close() end
    return nil, verdicts.failure("bad_input", "the compile limit must be a number of seconds > 0, got " .. tostring(opts.compile_limit))
  end
  self.compile_limit = opts.compile_limit or require("klineage.device.cache").TIME_LIMIT
  local traits = backends.traits(self.backend) or {}
  self.timed, self.profiles = traits.timed or false, traits.profiles or false
  self.sizes = opts.sizes or traits.sizes or "all"
  if opts.arch then
    self.arch = opts.arch
  elseif self.timed then
    local dev = self.pool:device(1)
    self.arch = dev and type(dev.arch) == "string" and dev.arch:match("^sm_%d+$") or "sm_90"
  else
    self.arch = "sm_90" -- NVRTC's static gate runs on every backend
  end
  if opts.ceilings ~= nil then self.ceilings_value = opts.ceilings or nil; self.ceilings_known = true end
  if opts.journal ~= false then
    local run, f
    if opts.resume then run, f = runs.open(opts.resume, opts.journal) else run, f = runs.create(opts.journal, opts.run_id) end
    if not run then
      self:close()
      return nil, f
    end
    self.run = run
    for _, r in ipairs(run.previous) do
      if r.charged then self.cycles_used = self.cycles_used + 1 end
    end
    local specs = {}
    for _, w in ipairs(opts.workloads or {}) do specs[#specs + 1] = { name = w.name, path = w.path, sha256 = w.sha256 } end
    local device = self.pool:device(1)
    local ok, err = run:append({
      kind = opts.resume and "resume" or "run", run = run.id, command = opts.command, backend = self.backend,
      arch = self.arch, device = device, versions = versions(), budget = opts.budget, specs = specs,
      resumed_with = opts.resume and #run.previous or nil,
    })
    if not ok then
      self:close()
      return nil, err
    end
  end
  return self
end

function Context:ceilings()
  if not self.ceilings_known then
    self.ceilings_known = true
    if self.timed then
      self.ceilings_value, self.ceilings_failure = require("klineage.device.ceilings").get(self.pool)
    end
  end
  return self.ceilings_value, self.ceilings_failure
end

function Context:charge()
  if self:exhausted() or (self.cycle_limit ~= nil and self.cycles_used >= self.cycle_limit) then
    return nil, verdicts.failure("budget_exhausted", string.format("the budget of %d gate cycles is spent", self.cycle_limit))
  end
  self.cycles_used, self.position = self.cycles_used + 1, self.position + 1
  return true
end

function Context:replayed(record)
  if type(record) == "table" and record.charged then self.position = self.position + 1 end
end

function Context:exhausted()
  return self.cycle_limit ~= nil and self.position >= self.cycle_limit
end

function Context:spent()
  return self.cycles_used, self.cycle_limit
end

function Context:judged(key)
  return self.run and self.run:lookup(key)
end

function Context:record(record)
  if self.run then
    record.run = self.run.id
    local ok, f = self.run:append(record)
    if not ok then verdicts.raise(f.verdict, f.message, { record = record }) end
  end
  return record
end

function Context:store_source(text)
  if not self.run then return nil end
  local sha, rel = self.run:store_source(text)
  if not sha then error(rel, 0) end
  return rel
end

-- An emu worker runs the C references whatever the run's backend is: they
-- are host code, and its buffers are host memory.
function Context:reference_pool()
  if (backends.traits(self.backend) or {}).host_code then return self.pool end
  if not self.emu_pool then
    local pool, f = backends.pool("emu", { timeout = self.timeout })
    if not pool then return nil, f end
    self.emu_pool = pool
  end
  return self.emu_pool
end

function Context:close()
  if self.own_pool and self.pool then self.pool:close() end
  self.pool = nil
  if self.emu_pool then self.emu_pool:close() end
  self.emu_pool = nil
  if self.run then self.run:close() end
end
Context.__close = Context.close

return M
