-- The gate: the judge of every candidate kernel. One evaluation runs four
-- stages and records each with its numbers and a verdict:
--
--   compile   NVRTC through the content-addressed cache; ptxas resources and
--             theoretical occupancy at the bench launch.
--   correct   against the baseline kernel run in the same worker, for every
--             size the candidate's `@kl requires` allows (test sizes and the
--             bench size) and several seeds. Inputs are fresh per trial and
--             identical for baseline and candidate; pure outputs are
--             poisoned (0xFF: NaN) before each launch; inputs are
--             checksummed after the candidate ran (a mutated input is its
--             own verdict).
--   profile   CUPTI-timed, L2-flushed, adaptive samples at the bench size;
--             the output is checked again afterwards; a time under the
--             roofline bound from measured ceilings is "suspicious".
--   metrics   CUPTI range-profiler metrics (on request).
--
--   gate.evaluate(candidate, w, opts) -> record
--     candidate = { file = path [, source = text] [, kernel = entry] [, label] }
--     w         = workload.load(...)
--     opts      = { pool = worker pool (required), baseline = candidate
--                   (default: the lineage's first version), seeds = { 1, 2, 3 },
--                   arch = "sm_90" (default: the worker's), profile = true,
--                   metrics = false | true | { names }, journal = J,
--                   ceilings = { copy_gbps, read_gbps, fp32_tflops },
--                   sizes = "test" (correctness at the test sizes only, as on
--                   emu, where bench sizes take too long) }
--   record.verdict is "ok" or the first failing stage's verdict; the
--   record is appended to opts.journal when given.
local annotations = require "klineage.annotations"
local cache = require "klineage.cache"
local files = require "klineage.files"
local workload = require "klineage.workload"
local protocol = require "klineage.worker.protocol"
local hash = require "kl.hash"
local nvrtc = require "kl.nvrtc"
local host = require "kl.host"

local M = {}

M.DEFAULT_METRICS = {
  "gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
  "dram__throughput.avg.pct_of_peak_sustained_elapsed", "sm__warps_active.avg.pct_of_peak_sustained_active",
  "smsp__inst_executed.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
  "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct",
}

-- A time under this fraction of the roofline bound is rejected: the bound
-- comes from measured ceilings, so the margin covers their own error.
M.ROOFLINE_MARGIN = 0.85

-- C parameter types -> protocol scalar kinds.
local SCALAR = {
  int = "i32", ["signed"] = "i32", ["signed int"] = "i32", int32_t = "i32",
  unsigned = "u32", ["unsigned int"] = "u32", uint32_t = "u32",
  ["long long"] = "i64", ["long long int"] = "i64", long = "i64", int64_t = "i64",
  ["unsigned long long"] = "i64", ["unsigned long"] = "i64", uint64_t = "i64", size_t = "i64",
  float = "f32", double = "f64",
}

-- The kind of each parameter of entry `name`: "buf" for pointers, a scalar
-- kind otherwise. Uses kl.source; nil, message when the entry is missing.
function M.signature(source, name)
  local unit = require("kl.source").parse(source)
  for _, fn in ipairs(unit:functions()) do
    local n = fn:field("name")
    if n and n:text() == name then
      local kinds = {}
      for i, p in ipairs(fn:params()) do
        if p.pointer_depth > 0 then
          kinds[i] = "buf"
        else
          local base = (p.base or p.type):gsub("^const%s+", ""):gsub("%s+", " ")
          kinds[i] = SCALAR[base]
          if not kinds[i] then return nil, string.format("parameter %d (%s) of %s has a type the gate cannot pass: %s", i, p.name, name, p.type) end
        end
      end
      return kinds
    end
  end
  return nil, "no function '" .. name .. "' in the source"
end

local function read_candidate(c)
  if c.source then return c.source end
  local src, err = files.read_text(c.file)
  if not src then error({ verdict = "bad_input", message = err }, 0) end
  return src
end

-- One prepared kernel: its source, cubin, signature and annotations.
local function prepare(c, w, arch)
  local source = read_candidate(c)
  local entry = c.kernel or w.kernel
  local t0 = host.clock()
  local res, msg = cache.compile(source, { arch = arch, name = c.file or "candidate.cu" })
  local stage = { ms = (host.clock() - t0) * 1e3 }
  if not res then
    stage.verdict, stage.message = "compile_error", msg
    return nil, stage
  end
  stage.cached = res.cached
  stage.functions = res.functions
  stage.cubin_bytes = res.cubin and #res.cubin or 0
  local kinds, serr = M.signature(source, entry)
  if not kinds then
    stage.verdict, stage.message = "bad_input", serr
    return nil, stage
  end
  local ann, aerr = annotations.parse(source, c.file)
  if not ann then
    stage.verdict, stage.message = "bad_input", aerr
    return nil, stage
  end
  stage.verdict = "ok"
  return {
    source = source, entry = entry, kinds = kinds, cubin = res.cubin, file = c.file or "candidate.cu",
    sha256 = hash.sha256(source), resources = res.functions[entry],
    module = "m" .. hash.sha256(source .. entry):sub(1, 16),
  }, stage
end

local function fail(verdict, message, extra)
  local t = extra or {}
  t.verdict, t.message = verdict, message
  return t
end

-- Talks to one worker for one evaluation; raises { verdict, message } on
-- a failed request so the stages read straight.
local Session = {}
Session.__index = Session

-- Inside evaluate_all, an evaluation is a coroutine: it hands its ticket to
-- the scheduler, which resumes it with the reply while other workers run.
function Session:call(req, timeout)
  local reply, verdict, info
  if self.async then
    reply, verdict, info = coroutine.yield(self.pool:submit(self.worker, req, timeout or self.timeout))
  else
    reply, verdict, info = self.pool:request(self.worker, req, timeout or self.timeout)
  end
  if not reply then
    error({ verdict = verdict, message = info and info.message or tostring(verdict) }, 0)
  end
  return reply
end

-- A request carrying bytes: small ones inline as base64, large ones in a
-- file the worker reads (protocol.lua says why), removed once answered.
local INLINE_MAX = 64 * 1024
function Session:call_with_bytes(req, field, bytes)
  if #bytes <= INLINE_MAX then
    req[field .. "_b64"] = protocol.base64(bytes)
    return self:call(req)
  end
  local path = os.tmpname()
  local h = assert(io.open(path, "wb"))
  local ok, werr = h:write(bytes)
  local closed, cerr = h:close() -- a full disk can show only at the flush
  if not ok or not closed then
    werr = werr or cerr
    os.remove(path)
    error({ verdict = "error", message = "cannot spool " .. field .. ": " .. tostring(werr) }, 0)
  end
  req[field .. "_path"] = path
  local cok, reply = pcall(self.call, self, req)
  os.remove(path)
  if not cok then error(reply, 0) end
  return reply
end

function Session:load(k)
  if self.loaded[k.module] then return end
  local req = { op = "load", module = k.module, kernels = { k.entry } }
  if self.pool.backend == "emu" then
    req.source, req.name = k.source, k.file -- the emulator compiles CUDA C itself
    self:call(req)
  else
    self:call_with_bytes(req, "cubin", k.cubin)
  end
  self.loaded[k.module] = true
end

-- Geometry of kernel k at params p (with an optional bind for run()).
local function geometry(k, p, bind, entry_override)
  local res, err = annotations.resolve(k.source, p, { file = k.file, bind = bind, kernel = entry_override })
  if not res then error({ verdict = "bad_input", message = err }, 0) end
  return res
end

-- The launch request for kernel k at params p.
function Session:launch_request(k, w, p, bind)
  bind = bind or {}
  local entry = bind.kernel or k.entry
  local kinds = k.kinds
  if bind.kernel and bind.kernel ~= k.entry then
    local err
    kinds, err = M.signature(k.source, bind.kernel)
    if not kinds then error({ verdict = "bad_input", message = err }, 0) end
  end
  local g = geometry(k, p, bind, bind.kernel)
  if not g.allowed then error({ verdict = "not_allowed", message = g.why }, 0) end
  local args = {}
  for i, a in ipairs(w.args) do
    local b = bind[a]
    if type(b) == "string" and w.buffer_by_name[b] then
      args[i] = { "buf", b }
    elseif w.buffer_by_name[a] and b == nil then
      args[i] = { "buf", a }
    else
      local v = b ~= nil and b or p[a]
      local kind = kinds[i]
      if kind == "buf" or kind == nil then
        error({ verdict = "bad_input", message = string.format("argument %d (%s) of %s: the kernel's parameter is %s", i, a, entry, tostring(kind)) }, 0)
      end
      args[i] = { kind, v }
    end
  end
  local geom = g.geometry
  return { op = "launch", module = k.module, kernel = entry, grid = geom.grid, block = geom.block,
           smem = geom.smem, args = args }
end

-- Runs kernel k once at params p: either one launch or the workload's
-- run(ctx, p). Returns the list of steps it made (for timing).
function Session:run(k, w, p)
  local steps = {}
  if not w.run then
    local req = self:launch_request(k, w, p)
    self:call(req)
    steps[1] = req
    return steps
  end
  local ctx = {}
  function ctx.zero(_, buf)
    local req = { op = "zero", buffer = buf }
    self:call(req)
    steps[#steps + 1] = req
  end
  function ctx.launch(_, bind)
    local req = self:launch_request(k, w, p, bind)
    self:call(req)
    steps[#steps + 1] = req
  end
  function ctx.read(_, buf, i)
    local v = self:call({ op = "read", buffer = buf, index = i }).value
    -- JSON has one number type: an integer buffer's element comes back an integer.
    local b = w.buffer_by_name[buf]
    if b and not workload.is_float(b.type) then v = protocol.integer(v) or v end
    return v
  end
  w.run(ctx, p)
  return steps
end

-- Allocates every buffer for params p (a new alloc drops the old buffers,
-- snapshots included).
function Session:alloc(w, p)
  local counts, err = workload.counts(w, p)
  if not counts then error({ verdict = "bad_input", message = err }, 0) end
  local alloc = {}
  for _, b in ipairs(w.buffer_list) do
    alloc[#alloc + 1] = { name = b.name, type = b.type, count = counts[b.name] }
  end
  self:call { op = "alloc", buffers = alloc }
end

-- What names a custom input's bytes: the spec's inits are deterministic
-- functions of (params, seed), so this key (with the spec file's hash)
-- always stands for the same bytes.
local function input_key(w, p, seed, name)
  local keys = {}
  for k in pairs(p) do keys[#keys + 1] = k end
  table.sort(keys)
  local parts = { w.path, w.sha256 or "", tostring(seed), name }
  for _, k in ipairs(keys) do parts[#parts + 1] = k .. "=" .. tostring(p[k]) end
  return table.concat(parts, "|")
end

-- Fills every buffer from the seed (the same seed gives the same bytes) and
-- poisons the outputs that have no init. Returns the input checksums.
function Session:fill(w, p, seed)
  local device_init, custom, poison = {}, {}, {}
  for _, b in ipairs(w.buffer_list) do
    if b.poisoned then
      poison[#poison + 1] = b.name -- an output or scratch with no init of its own
    elseif type(b.init) == "function" then
      custom[#custom + 1] = b.name
    else
      device_init[#device_init + 1] = { name = b.name, init = b.init or "zeros", stream = b.stream }
    end
  end
  local sums = {}
  if #device_init > 0 then
    sums = self:call({ op = "init", seed = seed, buffers = device_init }).checksums
  end
  if #custom > 0 then
    -- The worker keeps keyed uploads: the same (workload, size, seed)
    -- comes back in every trial and every version, and a scale-22 graph
    -- (554 MB) re-sent each time cost more than the kernels.
    local data
    for _, name in ipairs(custom) do
      local key = input_key(w, p, seed, name)
      if not self:call({ op = "upload", name = name, key = key }).cached then
        if not data then
          local herr
          data, herr = workload.host_inputs(w, p, seed)
          if not data then error({ verdict = "bad_input", message = herr }, 0) end
        end
        self:call_with_bytes({ op = "upload", name = name, key = key }, "data", data[name])
      end
    end
    -- The worker's own checksum, so that before and after are comparable.
    for k, v in pairs(self:call({ op = "checksum", buffers = custom }).checksums) do sums[k] = v end
  end
  if #poison > 0 then
    -- Floats are poisoned with NaN (0xFF bytes) every time. For integers
    -- 0xFF is -1, a value a kernel may legitimately write (an unreached
    -- vertex, a missed ray): the byte changes with the seed, so an element
    -- left unwritten cannot match the reference in every trial.
    local floats, ints = {}, {}
    for _, name in ipairs(poison) do
      if workload.is_float(w.buffer_by_name[name].type) then floats[#floats + 1] = name else ints[#ints + 1] = name end
    end
    if #floats > 0 then self:call { op = "poison", buffers = floats } end
    if #ints > 0 then self:call { op = "poison", buffers = ints, byte = ({ 0xFF, 0xA5, 0x5A })[seed % 3 + 1] } end
  end
  return sums
end

-- The buffers a kernel must leave untouched: everything neither an output
-- nor scratch.
local function inputs_of(w)
  local out = {}
  for _, b in ipairs(w.buffer_list) do
    if not b.output and not b.scratch then out[#out + 1] = b.name end
  end
  return out
end

-- Runs the baseline on the seed's inputs, keeps its outputs as "<name>@ref"
-- and fills the same inputs again for the run to judge. Returns the input
-- checksums of that second fill.
function Session:reference(base, w, p, seed)
  self:fill(w, p, seed)
  self:run(base, w, p)
  self:call { op = "snapshot", buffers = w.outputs, as = "ref" }
  return self:fill(w, p, seed)
end

-- Every output compared with its reference, each result tagged with its buffer.
function Session:compare_outputs(w)
  local results = {}
  for _, name in ipairs(w.outputs) do
    local tol = workload.tolerance(w, name)
    local c = self:call { op = "compare", buffer = name, against = name .. "@ref", rtol = tol.rtol, atol = tol.atol }
    c.buffer = name
    results[#results + 1] = c
  end
  return results
end

-- Baseline then candidate on identical inputs; compares every output.
function Session:trial(base, cand, w, size, seed)
  local p = size.params
  self:alloc(w, p)
  local sums = self:reference(base, w, p, seed)
  self:run(cand, w, p)
  local trial = { size = size.label, params = p, seed = seed, outputs = {} }
  local inputs = inputs_of(w)
  if #inputs > 0 then
    local after = self:call({ op = "checksum", buffers = inputs }).checksums
    for _, name in ipairs(inputs) do
      if sums[name] and after[name] ~= sums[name] then
        trial.pass = false
        trial.verdict = "mutated_input"
        trial.message = string.format("input '%s' was changed by the kernel", name)
        return trial
      end
    end
  end
  trial.pass = true
  for _, c in ipairs(self:compare_outputs(w)) do
    trial.outputs[#trial.outputs + 1] = c
    if not c.pass then
      trial.pass = false
      trial.verdict = "wrong"
      trial.message = string.format("%s: %d of %d elements off (first at index %d, max abs %.3g, max rel %.3g, tolerance %.3g%s)",
        c.buffer, c.bad_count, c.count, (c.first_bad or 1) - 1, c.max_abs, c.max_rel, c.tolerance,
        c.nonfinite > 0 and string.format(", %d not finite", c.nonfinite) or "")
    end
  end
  return trial
end

local function stage_from_error(e)
  if type(e) == "table" and e.verdict then return fail(e.verdict, e.message) end
  error(e, 0)
end

-- The correctness stage. Returns the stage and the first bench size both
-- kernels allow (the profile stage's size), if any.
function Session:correct(base, cand, w, seeds, which)
  local stage = { trials = {}, sizes = 0, skipped = {} }
  local bench_size
  for _, size in ipairs(workload.sizes(w)) do
    if which == "test" and size.bench then goto continue end
    local g = geometry(cand, size.params)
    local gb = geometry(base, size.params)
    if not g.allowed then
      stage.skipped[#stage.skipped + 1] = { size = size.label, why = g.why }
    elseif not gb.allowed then
      stage.skipped[#stage.skipped + 1] = { size = size.label, why = "baseline: " .. gb.why }
    else
      stage.sizes = stage.sizes + 1
      for _, seed in ipairs(seeds) do
        local ok, trial = pcall(self.trial, self, base, cand, w, size, seed)
        if not ok then
          local f = stage_from_error(trial)
          f.trials, f.sizes, f.skipped = stage.trials, stage.sizes, stage.skipped
          f.at = { size = size.label, seed = seed }
          return f
        end
        stage.trials[#stage.trials + 1] = trial
        if not trial.pass then
          stage.verdict, stage.message = trial.verdict, trial.message
          stage.at = { size = size.label, seed = seed }
          return stage
        end
        if size.bench and not bench_size then bench_size = size end
      end
    end
    ::continue::
  end
  if stage.sizes < 2 then
    stage.verdict = "too_few_sizes"
    stage.message = string.format("only %d size(s) allowed by the kernel's requires: the gate needs 2", stage.sizes)
    return stage
  end
  stage.verdict = "ok"
  return stage, bench_size
end

-- The buffers hold whatever size correctness ran last: sets size p up
-- again (seed 1) and returns the candidate's launches there, to replay.
function Session:launches_at(cand, w, p)
  self:alloc(w, p)
  self:fill(w, p, 1)
  return self:run(cand, w, p)
end

function Session:profile(base, cand, w, p, opts)
  local stage = {}
  local steps = self:launches_at(cand, w, p)
  local t = self:call({ op = "time", sequence = steps, max_seconds = opts.max_seconds or 2,
                        min_samples = opts.min_samples, max_samples = opts.max_samples, warmup = opts.warmup },
                      opts.profile_timeout)
  for k, v in pairs(t) do if k ~= "id" and k ~= "ok" then stage[k] = v end end
  stage.flops = workload.flops(w, p)
  stage.bytes = workload.bytes(w, p)
  local s = stage.median_ms / 1e3
  stage.gflops = stage.flops / s / 1e9
  stage.gbps = stage.bytes / s / 1e9
  stage.rate = workload.rate(w, p, s)
  -- After many timed launches, a fresh run on fresh inputs must still be
  -- right: catches results cached across launches and state that decays.
  self:reference(base, w, p, opts.recheck_seed or 7919)
  self:run(cand, w, p)
  local recheck = { pass = true }
  for _, c in ipairs(self:compare_outputs(w)) do
    if not c.pass then
      recheck = { pass = false, buffer = c.buffer, message = string.format("%s wrong after timing: %d elements off", c.buffer, c.bad_count) }
    end
  end
  stage.recheck = recheck
  local ceil = opts.ceilings
  if ceil then
    -- The fastest the memory system was seen to move bytes: reading alone
    -- beats a copy on HBM, and a bound must never be slower than possible.
    local mem_gbps = math.max(ceil.copy_gbps, ceil.read_gbps or 0)
    local bound_s = math.max(stage.bytes / (mem_gbps * 1e9), stage.flops / (ceil.fp32_tflops * 1e12))
    stage.roofline_ms = bound_s * 1e3
    stage.pct_of_roofline = bound_s / s * 100
    if s < M.ROOFLINE_MARGIN * bound_s then
      stage.verdict = "suspicious"
      stage.message = string.format("%.4f ms is under the roofline bound %.4f ms (memory %.0f GB/s, fp32 %.1f TFLOP/s)",
        stage.median_ms, bound_s * 1e3, mem_gbps, ceil.fp32_tflops)
      return stage
    end
  end
  if not recheck.pass then
    stage.verdict, stage.message = "stale_after_timing", recheck.message
    return stage
  end
  stage.verdict = "ok"
  return stage
end

-- Metrics of the candidate's launches at params p, on freshly set-up buffers.
function Session:metrics(cand, w, p, names)
  local steps = self:launches_at(cand, w, p)
  local m = self:call({ op = "metrics", sequence = steps, names = names }, 300)
  return { verdict = "ok", values = m.values, passes = m.passes }
end

local function default_baseline(w)
  if not w.lineage or not w.lineage[1] then return nil end
  return { file = w.dir .. "/" .. w.lineage[1], label = w.lineage[1] }
end

function M.evaluate(candidate, w, opts)
  assert(opts and opts.pool, "gate.evaluate: opts.pool is required")
  local pool = opts.pool
  local worker = opts.worker or 1
  local device = pool:device(worker)
  -- NVRTC's static gate runs on every backend: emu compiles for sm_90 too.
  local arch = opts.arch or (device and type(device.arch) == "string" and device.arch:match("^sm_%d+$")) or "sm_90"
  local record = {
    kind = "evaluation", workload = w.name, candidate = { file = candidate.file, label = candidate.label },
    device = device, arch = arch, backend = pool.backend,
    versions = { nvrtc = table.concat({ nvrtc.version() }, "."), klineage = host.version,
                 cupti = require("kl.cupti").version() },
    stages = {},
  }
  local function finish(verdict)
    record.verdict = verdict
    if opts.journal then assert(opts.journal:append(record)) end
    return record
  end
  local base_c = opts.baseline or default_baseline(w) or candidate
  local ok, cand, cstage = pcall(prepare, candidate, w, arch)
  if not ok then return finish(stage_from_error(cand).verdict) end
  record.stages.compile = cstage
  if not cand then return finish(cstage.verdict) end
  record.candidate.sha256 = cand.sha256
  local base, bstage
  ok, base, bstage = pcall(prepare, base_c, w, arch)
  if not ok or not base then
    record.stages.compile = fail("baseline_broken", "the baseline does not compile: " .. tostring((bstage or {}).message or base))
    return finish("baseline_broken")
  end
  -- Occupancy at the bench launch, computed with no GPU.
  local g = annotations.resolve(cand.source, w.params, { file = cand.file })
  if g and g.allowed and cand.resources then
    local occ = require("kl.occupancy").compute { arch = arch, registers = cand.resources.registers,
      smem = cand.resources.smem, barriers = cand.resources.barriers, threads = g.geometry.threads,
      dynamic_smem = g.geometry.smem }
    cstage.occupancy = occ and occ.occupancy
    cstage.active_blocks = occ and occ.active_blocks
    cstage.threads = g.geometry.threads
  end
  local s = setmetatable({ pool = pool, worker = worker, loaded = {}, timeout = opts.timeout or 60,
                           async = opts.async }, Session)
  record.worker = worker
  local lok, lerr = pcall(function() s:load(base); s:load(cand) end)
  if not lok then
    record.stages.correct = stage_from_error(lerr)
    return finish(record.stages.correct.verdict)
  end
  local t_correct = host.clock()
  -- pcall: a size whose annotations do not evaluate raises { verdict, message }
  local cok, correct, bench = pcall(s.correct, s, base, cand, w, opts.seeds or { 1, 2, 3 }, opts.sizes)
  if not cok then correct = stage_from_error(correct) end
  correct.ms = (host.clock() - t_correct) * 1e3
  record.stages.correct = correct
  if correct.verdict ~= "ok" then return finish(correct.verdict) end
  if opts.profile == false or opts.sizes == "test" then return finish("ok") end
  if pool.backend == "emu" then
    record.stages.profile = { verdict = "skipped", message = "no timing on emu" }
    return finish("ok")
  end
  if not bench then
    record.stages.profile = { verdict = "skipped", message = "no bench size is allowed by both kernels' requires" }
    return finish("ok")
  end
  local t_profile = host.clock()
  local pok, prof = pcall(s.profile, s, base, cand, w, bench.params, opts)
  record.stages.profile = pok and prof or stage_from_error(prof)
  record.stages.profile.label, record.stages.profile.params = bench.label, bench.params
  record.stages.profile.ms = (host.clock() - t_profile) * 1e3
  if record.stages.profile.verdict ~= "ok" then return finish(record.stages.profile.verdict) end
  -- The other bench sizes (bench_params), each timed the same way.
  for _, size in ipairs(workload.sizes(w)) do
    if size.bench and size.label ~= bench.label then
      local g2 = geometry(cand, size.params)
      local entry = { label = size.label, params = size.params }
      if not g2.allowed then
        entry.verdict, entry.message = "not_allowed", g2.why
      else
        local eok, e = pcall(s.profile, s, base, cand, w, size.params, opts)
        e = eok and e or stage_from_error(e)
        for k, v in pairs(e) do if k ~= "samples_ms" then entry[k] = v end end
      end
      record.stages.profile.sizes = record.stages.profile.sizes or {}
      table.insert(record.stages.profile.sizes, entry)
      if entry.verdict ~= "ok" and entry.verdict ~= "not_allowed" then return finish(entry.verdict) end
    end
  end
  if opts.metrics then
    local names = type(opts.metrics) == "table" and opts.metrics or M.DEFAULT_METRICS
    local mok, m = pcall(s.metrics, s, cand, w, bench.params, names)
    record.stages.metrics = mok and m or stage_from_error(m)
  end
  return finish("ok")
end

-- The workload's vendor routine (w.vendor, e.g. cuBLAS SGEMM) at every
-- bench size: its result is first checked against v0 like a candidate's,
-- then it is timed exactly like one. Returns a list of
-- { label, params, verdict, median_ms, ci_ms, gflops, gbps } or nil, err.
function M.vendor(w, opts)
  if not w.vendor then return nil, "the workload names no vendor routine" end
  local pool, worker = opts.pool, opts.worker or 1
  if pool.backend ~= "cuda" then return nil, "vendor libraries run on the cuda backend only" end
  local device = pool:device(worker)
  local arch = opts.arch or (device and type(device.arch) == "string" and device.arch:match("^sm_%d+$")) or "sm_90"
  local base, bstage = prepare(default_baseline(w), w, arch)
  if not base then return nil, "baseline: " .. tostring(bstage.message) end
  local s = setmetatable({ pool = pool, worker = worker, loaded = {}, timeout = opts.timeout or 120 }, Session)
  local results = {}
  for _, size in ipairs(workload.sizes(w)) do
    if size.bench then
      local p = size.params
      local r = { label = size.label, params = p }
      local ok, err = pcall(function()
        s:load(base)
        s:alloc(w, p)
        s:reference(base, w, p, 1)
        local args = {}
        for i, a in ipairs(w.vendor.args) do
          if w.buffer_by_name[a] then args[i] = { "buf", a }
          else args[i] = { math.type(p[a]) == "integer" and "i32" or "f32", p[a] } end
        end
        local step = { op = "vendor", library = w.vendor.library, routine = w.vendor.routine, args = args }
        -- JSON has one number type: the routine's choice (an algorithm number) is an integer.
        r.detail = protocol.integer(s:call(step).detail)
        for _, c in ipairs(s:compare_outputs(w)) do
          if not c.pass then error({ verdict = "wrong", message = string.format("%s differs from v0 in %d elements", c.buffer, c.bad_count) }, 0) end
        end
        local t = s:call({ op = "time", sequence = { step }, max_seconds = opts.max_seconds or 2 })
        r.median_ms, r.ci_ms = t.median_ms, t.ci_ms
        r.gflops = workload.flops(w, p) / (t.median_ms / 1e3) / 1e9
        r.gbps = workload.bytes(w, p) / (t.median_ms / 1e3) / 1e9
        r.verdict = "ok"
      end)
      if not ok then
        local f = stage_from_error(err)
        r.verdict, r.message = f.verdict, f.message
      end
      results[#results + 1] = r
    end
  end
  return results
end

-- Times two candidates interleaved in one worker (ABAB, in blocks of
-- `block` samples, `rounds` times) at the bench size and compares them:
-- speedup of b over a with a bootstrap interval; "no difference" when the
-- two medians' intervals overlap. Both must already pass the gate.
function M.compare(a, b, w, opts)
  assert(opts and opts.pool, "gate.compare: opts.pool is required")
  local pool, worker = opts.pool, opts.worker or 1
  local device = pool:device(worker)
  local arch = opts.arch or (device and type(device.arch) == "string" and device.arch:match("^sm_%d+$")) or "sm_90"
  local ka, sa = prepare(a, w, arch)
  if not ka then return nil, "a: " .. tostring(sa.message) end
  local kb, sb = prepare(b, w, arch)
  if not kb then return nil, "b: " .. tostring(sb.message) end
  local s = setmetatable({ pool = pool, worker = worker, loaded = {}, timeout = opts.timeout or 60 }, Session)
  local ok, result = pcall(function()
    s:load(ka)
    s:load(kb)
    local p = w.params
    s:alloc(w, p)
    s:fill(w, p, 1)
    local steps_a = s:run(ka, w, p)
    s:fill(w, p, 1)
    local steps_b = s:run(kb, w, p)
    local xa, xb = {}, {}
    local block = opts.block or 5
    for _ = 1, opts.rounds or 8 do
      for _, pair in ipairs({ { steps_a, xa }, { steps_b, xb } }) do
        local t = s:call({ op = "time", sequence = pair[1], warmup = 1, min_samples = block,
                           max_samples = block, max_seconds = 10 })
        for _, ms in ipairs(t.samples_ms) do pair[2][#pair[2] + 1] = ms end
      end
    end
    local c = require("klineage.measure.stats").compare(xa, xb)
    c.samples = { a = xa, b = xb }
    return c
  end)
  if not ok then
    if type(result) == "table" then return nil, result.verdict .. ": " .. tostring(result.message) end
    error(result, 0)
  end
  return result
end

-- Evaluates the candidates on every worker of the pool at once (one per
-- visible GPU), each worker taking the next candidate when it finishes one.
-- Returns the records in the candidates' order. opts as for evaluate, plus
-- before(i) (called as candidate i starts: compile ahead, progress) and
-- after(i, record). With one worker it is evaluate in a loop.
function M.evaluate_all(candidates, w, opts)
  local pool, records = opts.pool, {}
  local function hook(name, ...) if opts[name] then opts[name](...) end end
  if pool:size() <= 1 then
    for i, c in ipairs(candidates) do
      hook("before", i)
      records[i] = M.evaluate(c, w, opts)
      hook("after", i, records[i])
    end
    return records
  end
  local next_i, running = 1, {}
  -- Worker k takes the next candidate, if any is left.
  local function launch(k)
    if next_i > #candidates then return false end
    local i = next_i
    next_i = i + 1
    hook("before", i)
    local o = setmetatable({ worker = k, async = true }, { __index = opts })
    running[k] = { index = i, co = coroutine.create(function() return M.evaluate(candidates[i], w, o) end) }
    return true
  end
  -- Resumes worker k's evaluation with a reply, up to its next request.
  local function step(k, ...)
    local r = running[k]
    local ok, out = coroutine.resume(r.co, ...)
    if not ok then error(out, 0) end
    if coroutine.status(r.co) ~= "dead" then
      r.ticket = out
      return
    end
    records[r.index] = out
    running[k] = nil
    hook("after", r.index, out)
    if launch(k) then return step(k) end
  end
  for k = 1, pool:size() do
    if launch(k) then step(k) end
  end
  while next(running) do
    local ks, tickets = {}, {}
    for k, r in pairs(running) do ks[#ks + 1], tickets[#tickets + 1] = k, r.ticket end
    local j = pool:wait_any(tickets)
    step(ks[j], pool:collect(tickets[j]))
  end
  return records
end

return M
