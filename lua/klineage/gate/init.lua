-- The gate: the judge of every candidate kernel. One evaluation runs these
-- stages and records each with its numbers and a verdict
-- (klineage.base.verdicts names them all):
--
--   compile   NVRTC through the content-addressed cache; ptxas resources and
--             theoretical occupancy at the bench launch; a kernel no block
--             of which fits on the arch is launch_error, on emu too
--                                                         (gate/kernel.lua)
--   reference the baseline against the workload's C reference at the test
--             sizes, once per run context               (gate/reference.lua)
--   correct   against the baseline kernel run in the same worker, at every
--             size both kernels' `@kl requires` allow and several seeds, on
--             identical fresh inputs; pure outputs poisoned before each
--             launch; inputs checksummed after the candidate ran
--                                                         (gate/correct.lua)
--   profile   CUPTI-timed, L2-flushed, adaptive samples at the bench size;
--             the output checked again afterwards; a time under the
--             roofline bound is "suspicious"             (gate/profile.lua)
--   metrics   CUPTI range-profiler metrics, on request    (gate/profile.lua)
--
-- Every function takes the run context first (klineage.device.context): it gives
-- the pool, the backend's sizes, the arch, the ceilings, the journal and the
-- budget. Each evaluation and each compare is one gate cycle, charged to the
-- budget before any work (a compile error and a refused candidate too),
-- except in gate.judge: a candidate evaluated and compared there is one
-- cycle (the compare's record says prepaid = true, charged = false).
-- A judgement the run's journal already holds (same candidate text,
-- baseline, spec, seeds, sizes and options) is returned from there, uncharged.
--
--   gate.evaluate(ctx, candidate, w [, opts]) -> record
--     candidate = { file = path [, source = text] [, kernel = entry] [, label]
--                   [, provenance = { parent = sha256, producer = { kind, name, params, edit } }] }
--     opts = { baseline = candidate (default: the lineage's first version),
--              seeds = { 1, 2, 3 }, random_seeds = 1 (drawn per evaluation, recorded
--              as record.drawn_seeds), profile = true, metrics = false | true | { names },
--              max_seconds, min_samples, max_samples, warmup, sizes = "test" | "all",
--              worker = i }
--     record.verdict is "ok" or the first failing stage's verdict, and
--     record.blame says whom it is about (verdicts.get(id).blame).
--   gate.evaluate_all(ctx, candidates, w [, opts]) -> records   (gate/schedule.lua)
--   gate.compare(ctx, a, b, w [, opts]) -> result | nil, failure (gate/compare.lua)
--   gate.judge(ctx, candidate, w, { baseline, against [, provenance] }) ->
--     { record, verdict, effect }: the evaluation (profiled where the
--     backend times kernels), then there the compare of the candidate
--     against `against` (the kernel it changes). effect is always there:
--     { measured = true, speedup (candidate over against), ci, outcome },
--     or { measured = false, why }: the gate refused it, the backend times
--     nothing (ctx.timed), the compare failed. A compare the budget could
--     not pay makes the verdict budget_exhausted.
--   gate.vendor(ctx, w [, opts]) -> rows | nil, failure           (gate/vendor.lua)
--   gate.signature(source, entry) -> kinds | nil, failure         (gate/kernel.lua)
local annotations = require "klineage.workload.annotations"
local baseline_store = require "klineage.gate.baseline_store"
local correct = require "klineage.gate.correct"
local kernel = require "klineage.gate.kernel"
local profile = require "klineage.gate.profile"
local reference = require "klineage.gate.reference"
local runs = require "klineage.store.runs"
local session = require "klineage.gate.session"
local verdicts = require "klineage.base.verdicts"
local workload = require "klineage.workload"
local hash = require "kl.hash"
local host = require "kl.host"

local M = {}

M.DEFAULT_METRICS = {
  "gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
  "dram__throughput.avg.pct_of_peak_sustained_elapsed", "sm__warps_active.avg.pct_of_peak_sustained_active",
  "smsp__inst_executed.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
  "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct",
}
M.ROOFLINE_MARGIN = profile.ROOFLINE_MARGIN
M.signature = kernel.signature

function M.check_context(ctx, who)
  if type(ctx) ~= "table" or not ctx.pool or type(ctx.charge) ~= "function" then
    error(who .. ": the first argument must be a run context (klineage.device.context.new)", 3)
  end
end

local function label_of(c)
  return c.label or (c.file and c.file:match("[^/]+$")) or "candidate"
end

-- Seeds drawn at random for each evaluation, beside the fixed ones: a
-- kernel that special-cases the inputs it can see (a table keyed by the
-- first element of the fixed seeds' inputs) meets inputs nobody could see
-- in advance. They are tried at the test sizes, where inputs are cheap to
-- build (a host-built scale-22 graph is not). The drawn seeds are
-- recorded; the key counts them but not their values, so a resumed run
-- reuses the judgement.
M.RANDOM_SEEDS = 1

local function draw_seeds(n)
  local seeds = {}
  if n <= 0 then return seeds end
  local h = assert(io.open("/dev/urandom", "rb"))
  local bytes = h:read(4 * n)
  h:close()
  for i = 1, n do
    -- above the fixed seeds' range, so a drawn seed never repeats one
    seeds[i] = 1000 + string.unpack("<I4", bytes, 4 * i - 3) % 2000000000
  end
  return seeds
end

-- The options that can change a verdict, as they go into the record and
-- into the judgement's key.
local function verdict_options(ctx, opts)
  local metrics = opts.metrics
  if metrics == true then metrics = M.DEFAULT_METRICS end
  return {
    seeds = opts.seeds or { 1, 2, 3 }, random_seeds = opts.random_seeds or M.RANDOM_SEEDS,
    sizes = opts.sizes or ctx.sizes, profile = opts.profile ~= false,
    metrics = metrics or nil, max_seconds = opts.max_seconds, min_samples = opts.min_samples,
    max_samples = opts.max_samples, warmup = opts.warmup,
    -- a limit other than the default can turn a slow compile into compile_timeout
    -- (absent at the default, so that earlier runs' keys still match)
    compile_limit = ctx.compile_limit ~= require("klineage.device.cache").TIME_LIMIT and ctx.compile_limit or nil,
  }
end

-- The record's identity and provenance, with both texts stored in the run
-- folder. Returns the record, the candidate's text and the baseline's
-- candidate, or a record already finished (the candidate cannot be read).
local function new_record(ctx, candidate, w, opts, options)
  local base_c = opts.baseline or kernel.baseline_of(w) or candidate
  local record = {
    kind = "evaluation", backend = ctx.backend, arch = ctx.arch,
    workload = { name = w.name, path = w.path, sha256 = w.sha256 },
    candidate = { file = candidate.file, label = label_of(candidate), kernel = candidate.kernel },
    baseline = { file = base_c.file, label = label_of(base_c), self = base_c == candidate or nil },
    provenance = candidate.provenance, options = options, stages = {},
  }
  local text, f = kernel.read(candidate)
  if not text then return record, nil, base_c, f end
  record.candidate.sha256, record.candidate.source = hash.sha256(text), ctx:store_source(text)
  local btext = base_c == candidate and text or kernel.read(base_c)
  if btext then record.baseline.sha256, record.baseline.source = hash.sha256(btext), ctx:store_source(btext) end
  record.key = runs.key {
    candidate = record.candidate.sha256, entry = candidate.kernel or w.kernel, baseline = record.baseline.sha256,
    spec = w.sha256, reference = w.reference and w.reference.sha256, backend = ctx.backend, arch = ctx.arch,
    options = options,
  }
  return record, text, base_c
end

-- Occupancy at the bench launch, computed with no GPU.
local function add_occupancy(stage, cand, w, arch)
  local g = annotations.resolve(cand.source, w.params, { file = cand.file })
  if g and g.allowed and cand.resources then
    local occ = require("kl.occupancy").compute { arch = arch, registers = cand.resources.registers,
      smem = cand.resources.smem, barriers = cand.resources.barriers, threads = g.geometry.threads,
      dynamic_smem = g.geometry.smem }
    stage.occupancy = occ and occ.occupancy
    stage.active_blocks = occ and occ.active_blocks
    stage.threads = g.geometry.threads
    stage.why_zero = occ and occ.why_zero
  end
end

-- A kernel no block of which fits on a multiprocessor of the arch (its
-- registers or shared memory at the bench block) cannot launch there: the
-- device refuses it, and emu, which would run it, must too.
local function unlaunchable(stage, arch)
  if stage.active_blocks ~= 0 then return nil end
  stage.verdict = "launch_error"
  stage.message = string.format("no block of %d threads fits on an %s multiprocessor (%s): the device would refuse every launch",
    stage.threads or 0, arch, tostring(stage.why_zero or "its resources"))
  return "launch_error"
end

-- The other bench sizes (bench_params), each timed as the first.
local function other_bench_sizes(s, base, cand, w, bench, popts)
  local entries = {}
  for _, size in ipairs(workload.sizes(w)) do
    if size.bench and size.label ~= bench.label then
      local entry = { label = size.label, params = size.params }
      local g, gf = verdicts.catch(session.geometry, cand, size.params)
      if not g then
        entry.verdict, entry.message = gf.verdict, gf.message
      elseif not g.allowed then
        entry.verdict, entry.message = "not_allowed", g.why
      else
        local e = session.guarded(profile.stage, s, base, cand, w, size.params, popts)
        for k, v in pairs(e) do if k ~= "samples_ms" then entry[k] = v end end
      end
      entries[#entries + 1] = entry
      if entry.verdict ~= "ok" and entry.verdict ~= "not_allowed" then return entries, entry.verdict end
    end
  end
  return entries
end

-- The stages, once the cycle is paid for. Returns the verdict.
local function judge(ctx, record, candidate, base_c, w, opts, options)
  local worker = opts.worker or 1
  record.device = ctx.pool:device(worker)
  record.worker = worker
  local cand, cstage = kernel.prepare(candidate, w, ctx.arch, ctx.compile_limit)
  record.stages.compile = cstage
  if not cand then return cstage.verdict end
  local base, bstage = kernel.prepare(base_c, w, ctx.arch, ctx.compile_limit)
  if not base then
    record.stages.compile = { verdict = "baseline_broken", message = "the baseline does not compile: " .. tostring(bstage.message),
                              cause = bstage.verdict }
    return "baseline_broken"
  end
  add_occupancy(cstage, cand, w, ctx.arch)
  if unlaunchable(cstage, ctx.arch) then return "launch_error" end
  local rverdict = reference.judge(ctx, record, base, w, options, opts) -- the baseline against reference.c
  if rverdict then return rverdict end
  local s = session.new { pool = ctx.pool, worker = worker, timeout = ctx.timeout, async = opts.async,
                          store = baseline_store.of_context(ctx) }
  local t0 = host.clock()
  record.drawn_seeds = draw_seeds(options.random_seeds)
  local cstage2, bench = verdicts.catch(correct.stage, s, base, cand, w, options.seeds, options.sizes,
                                        record.drawn_seeds)
  if not cstage2 then cstage2 = session.stage_of(bench); bench = nil end
  cstage2.ms = (host.clock() - t0) * 1e3
  record.stages.correct = cstage2
  if cstage2.verdict ~= "ok" then return cstage2.verdict end
  if not options.profile then return "ok" end
  if not ctx.profiles then
    record.stages.profile = { verdict = "skipped", message = "no timing on " .. ctx.backend }
    return "ok"
  end
  if options.sizes == "test" then
    record.stages.profile = { verdict = "skipped", message = "correctness at the test sizes only: nothing timed" }
    return "ok"
  end
  if not bench then
    record.stages.profile = { verdict = "skipped", message = "no bench size is allowed by both kernels' requires" }
    return "ok"
  end
  local popts = setmetatable({ ceilings = ctx:ceilings() }, { __index = opts })
  local t1 = host.clock()
  local p = session.guarded(profile.stage, s, base, cand, w, bench.params, popts)
  p.label, p.params = bench.label, bench.params
  p.ms = (host.clock() - t1) * 1e3
  record.stages.profile = p
  record.ceilings = popts.ceilings
  if p.verdict ~= "ok" then return p.verdict end
  local sizes, bad = other_bench_sizes(s, base, cand, w, bench, popts)
  if #sizes > 0 then p.sizes = sizes end
  if bad then return bad end
  if options.metrics then
    record.stages.metrics = session.guarded(profile.metrics, s, cand, w, bench.params, options.metrics)
  end
  return "ok"
end

function M.evaluate(ctx, candidate, w, opts)
  M.check_context(ctx, "gate.evaluate")
  opts = opts or {}
  local options = verdict_options(ctx, opts)
  local record, _, base_c, rerr = new_record(ctx, candidate, w, opts, options)
  if record.key then
    local earlier = ctx:judged(record.key)
    if earlier then
      earlier.reused = true
      ctx:replayed(earlier)
      return earlier
    end
  end
  local paid, bf = ctx:charge()
  if not paid then
    record.verdict, record.blame, record.message = bf.verdict, "budget", bf.message
    return record -- not judged, so not journaled: a resumed run with more budget judges it
  end
  record.charged = true
  record.versions = { nvrtc = table.concat({ require("kl.nvrtc").version() }, "."), klineage = host.version }
  local verdict
  if rerr then
    record.stages.compile = { verdict = rerr.verdict, message = rerr.message }
    verdict = rerr.verdict
  else
    verdict = judge(ctx, record, candidate, base_c, w, opts, options)
  end
  record.verdict = verdict
  record.blame = (verdicts.get(verdict) or {}).blame
  return ctx:record(record)
end

function M.judge(ctx, candidate, w, opts)
  local record = M.evaluate(ctx, candidate, w, { baseline = opts.baseline, profile = ctx.timed })
  local out = { record = record, verdict = record.verdict }
  if record.verdict ~= "ok" then
    out.effect = { measured = false, why = "not measured: the gate said " .. tostring(record.verdict) }
  elseif not ctx.timed then
    out.effect = { measured = false, why = "not measured: the " .. ctx.backend .. " backend times nothing" }
  else
    -- One compile-profile cycle a candidate, as the paper counts it: the
    -- compare rides on the evaluation's cycle when that was paid now; after
    -- a resume that found the evaluation journaled, the compare pays its own.
    local c, f = M.compare(ctx, opts.against, candidate, w, { provenance = opts.provenance,
                                                              prepaid = not record.reused and record.charged == true })
    if not c then
      out.effect = { measured = false, why = "the compare failed: " .. tostring(f) }
      if f.verdict == "budget_exhausted" then out.verdict = "budget_exhausted" end
    else
      out.effect = { measured = true, speedup = c.speedup, ci = c.ci, outcome = c.outcome }
    end
  end
  return out
end

M.evaluate_all = function(...) return require("klineage.gate.schedule").evaluate_all(M.evaluate, ...) end
M.compare = function(...) return require("klineage.gate.compare").compare(...) end
M.vendor = function(...) return require("klineage.gate.vendor").vendor(...) end

return M
