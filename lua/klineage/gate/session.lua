-- One worker, driven for one evaluation: the requests of the worker
-- protocol (worker/protocol.lua) that the gate's stages are made of. Every
-- method raises a failure (klineage.base.verdicts) when a request fails, so the
-- stages read straight; the stage that catches it decides the verdict.
--
--   session.new{ pool, worker = i, timeout = s, async = bool [, store] } -> Session
--       store = { dir, owned }: the baseline's outputs are also kept on
--       disk there (gate/baseline_store.lua; baseline_store.of_context)
--   s:call(req [, timeout]) -> reply
--   s:load(k)                     the prepared kernel k into the worker, once
--   s:alloc(w, p)                 every buffer of workload w at params p
--   s:fill(w, p, seed [, role]) -> input checksums; role "baseline" gives
--       integer outputs another poison byte than the candidate's run gets
--   s:run(k, w, p) -> steps       one run (a launch, or w.run's sequence)
--   s:reference(base, w, p, seed [, { store }]) -> checksums, how: the
--       baseline's outputs kept as "<name>@ref" (and checksummed), the
--       inputs filled again; how as baseline_outputs says
--   s:baseline_outputs(base, w, p, seed [, { store }]) -> how: the
--       baseline's outputs at (p, seed) as "<name>@ref": "kept" (the
--       worker's copy from an earlier trial), "stored" (the session's
--       store), "ran" (a run, kept both ways now); store = false leaves the
--       store out (a seed drawn at random never comes again); what its run
--       raised is raised as it is
--   s:compare_outputs(w) -> { compare replies, each with .buffer }; raises
--       out_of_bounds when the reference copy changed since it was taken
--   s:compare_against(w, as [, of]) -> the same, against the copies
--       "<name>@<as>" (of: compares the copies "<name>@<of>" instead)
--   session.mismatch(c) -> a failed compare reply c in one line: the first
--       bad index and the largest errors
--   s:check_canaries()            raises out_of_bounds when a buffer's guard
--       regions changed (the worker checks; cuda has them)
--   s:launches_at(k, w, p) -> steps, setup   size p set up afresh for timing:
--       the candidate's launches, and the requests that set up each sample
--   session.guarded(fn, ...) -> fn's stage, or a stage made of the failure
--       it raised ({ verdict, message, signal, code, stderr })
local alias = require "klineage.workload.alias"
local annotations = require "klineage.workload.annotations"
local baseline_store = require "klineage.gate.baseline_store"
local kernel = require "klineage.gate.kernel"
local protocol = require "klineage.device.worker.protocol"
local verdicts = require "klineage.base.verdicts"
local workload = require "klineage.workload"
local hash = require "kl.hash"

local M = {}

local Session = {}
Session.__index = Session

function M.new(opts)
  return setmetatable({ pool = opts.pool, worker = opts.worker or 1, timeout = opts.timeout or opts.pool.timeout,
                        async = opts.async, store = opts.store, loaded = {}, built = {}, generation = nil }, Session)
end

-- Inside gate.evaluate_all an evaluation is a coroutine: it hands its
-- ticket to the scheduler, which resumes it with the reply while other
-- workers run.
function Session:call(req, timeout)
  local reply, f
  if self.async then
    reply, f = coroutine.yield(self.pool:submit(self.worker, req, timeout or self.timeout))
  else
    reply, f = self.pool:request(self.worker, req, timeout or self.timeout)
  end
  if not reply then error(f, 0) end
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
    os.remove(path)
    verdicts.raise("io_error", "cannot spool " .. field .. ": " .. tostring(werr or cerr))
  end
  req[field .. "_path"] = path
  local reply, f = verdicts.catch(self.call, self, req)
  os.remove(path)
  if not reply then error(f, 0) end
  return reply
end

function Session:load(k)
  -- A worker that died has lost its modules; its replacement loads afresh.
  if self.generation ~= self.pool:generation(self.worker) then self.loaded = {} end
  if self.loaded[k.module] then return end
  local req = { op = "load", module = k.module, kernels = { k.entry } }
  if require("klineage.device.backends").traits(self.pool.backend).host_code then
    -- The engine compiles (g++, a trusted compiler on the kernel's text, as
    -- NVRTC is); the worker, sandboxed, only loads the shared object.
    local built, f = require("klineage.device.emu").build(k.source, { name = k.file, time_limit = k.compile_limit })
    if not built then
      if f.verdict == "io_error" or f.verdict == "compile_timeout" then error(f, 0) end
      -- a construct the emulator lacks, or one g++ rejects after NVRTC accepted it
      verdicts.raise("unsupported", "emu: " .. f.message)
    end
    req.source, req.name, req.library = k.source, k.file, built.path
    self.built[k.module] = built.key -- what the baseline store's key names
    self:call(req)
  else
    self:call_with_bytes(req, "cubin", k.cubin)
  end
  local gen = self.pool:generation(self.worker) -- the load may have started a worker
  if gen ~= self.generation then self.loaded, self.generation = {}, gen end
  self.loaded[k.module] = true
end

-- Geometry of kernel k at params p (with an optional bind for run()).
function M.geometry(k, p, bind, entry)
  local res, f = annotations.resolve(k.source, p, { file = k.file, bind = bind, kernel = entry })
  if not res then error(f, 0) end
  return res
end

local sandbox = require "klineage.workload.spec_sandbox"
local types = require "klineage.base.types"

-- The scalar kinds narrower than a Lua integer, and u64's sign: a value
-- outside would wrap in the kernel.
local RANGE = { i32 = { -(1 << 31), (1 << 31) - 1 }, u32 = { 0, (1 << 32) - 1 }, u64 = { 0, math.maxinteger } }

-- The launch request for kernel k at params p. What the spec decides (its
-- args, a run's bind) is checked against the kernel's parameters here, so
-- that a mismatch is the spec's bad_input, not a malformed request.
function Session:launch_request(k, w, p, bind)
  bind = bind or {}
  local entry = bind.kernel or k.entry
  local kinds = k.kinds
  if bind.kernel and bind.kernel ~= k.entry then
    local f
    kinds, f = kernel.signature(k.source, bind.kernel)
    if not kinds then error(f, 0) end
  end
  local function refuse(fmt, ...)
    verdicts.raise("bad_input", string.format("%s: " .. fmt, w.path, ...))
  end
  if #kinds ~= #w.args then
    refuse("args: %d arguments, but %s in %s takes %d parameters", #w.args, entry, k.file, #kinds)
  end
  local g = M.geometry(k, p, bind, bind.kernel)
  if not g.allowed then verdicts.raise("not_allowed", g.why) end
  local args, holder = {}, {}
  for i, a in ipairs(w.args) do
    local b, kind = bind[a], kinds[i]
    local buf = b == nil and w.buffer_by_name[a] and a
    if type(b) == "string" then
      if not w.buffer_by_name[b] then refuse("run: ctx:launch binds %s to '%s', which is not a buffer", a, b) end
      buf = b
    end
    if buf then
      if kind ~= "buf" then refuse("args[%d]: buffer '%s' for parameter %d of %s, which is a %s", i, buf, i, entry, kind) end
      -- by the buffer's own name: in an in-place view (klineage.workload.alias) an
      -- input's name stands for the output it is merged into
      local name = w.buffer_by_name[buf].name
      -- one buffer for two pointers is an in-place launch: only where the
      -- spec's alias declares it, or the kernel is judged on a form it never saw
      local other = holder[name]
      if other and not alias.declared(w, other, a) then
        refuse("run: ctx:launch binds %s and %s to one buffer '%s', which the spec's alias does not declare", other, a, name)
      end
      holder[name] = holder[name] or a
      args[i] = { "buf", name }
    else
      local v = b ~= nil and b or p[a]
      if kind == "buf" then refuse("args[%d]: '%s' is not a buffer, but parameter %d of %s is a pointer", i, a, i, entry) end
      if type(v) ~= "number" then refuse("args[%d]: '%s' is %s, not a number", i, a, type(v)) end
      if types.get(kind).integer then
        local n = math.tointeger(v)
        local r = RANGE[kind]
        if not n or (r and (n < r[1] or n > r[2])) then
          refuse("args[%d]: '%s' = %s does not fit parameter %d of %s, a %s", i, a, tostring(v), i, entry, kind)
        end
        v = n
      end
      args[i] = { kind, v }
    end
  end
  local geom = g.geometry
  return { op = "launch", module = k.module, kernel = entry, grid = geom.grid, block = geom.block,
           smem = geom.smem, args = args }
end

-- A bind from a spec's run: a plain table of names in args (and `kernel`)
-- to numbers and buffer names, copied raw so that no code of the spec
-- runs here.
local function plain_bind(w, bind)
  if bind == nil then return {} end
  local copy, f = sandbox.plain(bind, "run: ctx:launch's bind")
  if not copy then verdicts.raise("bad_input", w.path .. ": " .. f) end
  if type(copy) ~= "table" then
    verdicts.raise("bad_input", string.format("%s: run: ctx:launch takes a table, got %s", w.path, type(copy)))
  end
  local named = {}
  for _, a in ipairs(w.args) do named[a] = true end
  for key, v in pairs(copy) do
    if key == "kernel" then
      if type(v) ~= "string" then verdicts.raise("bad_input", w.path .. ": run: ctx:launch's bind.kernel must be a name") end
    elseif not named[key] then
      verdicts.raise("bad_input", string.format("%s: run: ctx:launch binds '%s', which is not in args", w.path, tostring(key)))
    elseif type(v) ~= "number" and type(v) ~= "string" then
      verdicts.raise("bad_input", string.format("%s: run: ctx:launch binds %s to a %s", w.path, key, type(v)))
    end
  end
  return copy
end

local function buffer_of(w, fn, buf)
  local b = type(buf) == "string" and w.buffer_by_name[buf]
  if not b then verdicts.raise("bad_input", string.format("%s: run: ctx:%s: %s is not a buffer", w.path, fn, tostring(buf))) end
  return b
end

-- Steps a run sends at most in one batch: a run that never reads would
-- otherwise hold every launch until its end, and a batch's timeout is the
-- request timeout times its launches, so a hang is caught within 8 of them.
local MAX_BATCH = 8

-- Runs kernel k once at params p: either one launch or the workload's
-- run(ctx, p), which must launch k's entry, the kernel under judgement, at
-- least once (a run that launches nothing would pass any kernel). Returns
-- the list of steps it made (for timing; a plain array, as it travels to
-- the worker) and whether they depended on the data (the run read a
-- buffer back).
function Session:run(k, w, p)
  local steps = {}
  if not w.run then
    local req = self:launch_request(k, w, p)
    self:call(req)
    steps[1] = req
    return steps
  end
  local ctx, judged, data_dependent = {}, 0, false
  -- Zeros and launches wait for the next read (or the run's end) and go
  -- with it as one batch: a failure shows there, as the same verdict.
  local pending, launches = {}, 0
  local function flush()
    if #pending == 0 then return nil end
    local batch = pending
    pending = {}
    local reply = self:call({ op = "batch", steps = batch }, (self.timeout or 60) * math.max(1, launches))
    launches = 0
    return reply.results[#reply.results]
  end
  local function queue(req)
    pending[#pending + 1] = req
    steps[#steps + 1] = req
    if req.op == "launch" then launches = launches + 1 end
    if #pending >= MAX_BATCH then flush() end
  end
  function ctx.zero(_, buf)
    queue({ op = "zero", buffer = buffer_of(w, "zero", buf).name })
  end
  function ctx.launch(_, bind)
    local req = self:launch_request(k, w, p, plain_bind(w, bind))
    queue(req)
    if req.kernel == k.entry then judged = judged + 1 end
  end
  local counts
  function ctx.read(_, buf, i)
    data_dependent = true -- the launches that follow depend on the data
    local b = buffer_of(w, "read", buf)
    if not counts then
      local f
      counts, f = workload.counts(w, p)
      if not counts then error(f, 0) end
    end
    local at = math.type(i) and math.tointeger(i)
    if not at or at < 0 or at >= counts[b.name] then
      verdicts.raise("bad_input", string.format("%s: run: ctx:read(\"%s\", %s): the index must be an integer in [0, %d)",
        w.path, b.name, tostring(i), counts[b.name]))
    end
    pending[#pending + 1] = { op = "read", buffer = b.name, index = at }
    local v = flush().value
    -- JSON has one number type: an integer buffer's element comes back an integer.
    if not workload.is_float(b.type) then v = protocol.integer(v) or v end
    return v
  end
  w.run(ctx, p)
  flush()
  if judged == 0 then
    verdicts.raise("bad_input", string.format("%s: run: made no launch of %s, the kernel under judgement (%s)",
      w.path, k.entry, k.file))
  end
  return steps, data_dependent
end

-- Allocates every buffer for params p (a new alloc drops the old buffers,
-- snapshots included).
function Session:alloc(w, p)
  local counts, f = workload.counts(w, p)
  if not counts then error(f, 0) end
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

-- The poison byte of integer outputs, by seed and role. For floats 0xFF is
-- NaN every time, which never passes. For integers 0xFF is -1, a value a
-- kernel may legitimately write (an unreached vertex, a missed ray): the
-- byte changes with the seed, so an element left unwritten cannot match
-- the reference in every trial, and the baseline's run and the
-- candidate's always get different bytes, so an element that neither
-- writes cannot compare equal either.
local INT_POISON = { 0xFF, 0xA5, 0x5A }
local function int_poison(seed, role)
  return INT_POISON[(seed + (role == "baseline" and 1 or 0)) % 3 + 1]
end

-- Fills every buffer from the seed (the same seed gives the same bytes) and
-- poisons the outputs that have no init. Returns the input checksums.
-- The buffers of w at params p by how a fill sets them up: generated on
-- the device (init specs, bounds evaluated), built on the host (names), and
-- poisoned (outputs and scratch with no init of their own), floats and
-- integers apart.
local function fill_plan(w, p)
  local plan = { device_init = {}, custom = {}, floats = {}, ints = {} }
  for _, b in ipairs(w.buffer_list) do
    if b.poisoned then
      local list = workload.is_float(b.type) and plan.floats or plan.ints
      list[#list + 1] = b.name
    elseif type(b.init) == "function" then
      plan.custom[#plan.custom + 1] = b.name
    else
      local init, f = workload.init_of(w, b.name, p) -- { "int", lo, hi } bounds may be expressions
      if not init then error(f, 0) end
      plan.device_init[#plan.device_init + 1] = { name = b.name, init = init, stream = b.stream }
    end
  end
  return plan
end

-- The checksums of the inputs and the baseline outputs each worker keeps,
-- by pool, worker generation and key: held here, where no kernel can reach
-- them, so that a kept copy a kernel overwrote since is never trusted.
local kept_sums = setmetatable({}, { __mode = "k" })

local function kept_of(s)
  local by_worker = kept_sums[s.pool] or {}
  kept_sums[s.pool] = by_worker
  local gen = s.pool:generation(s.worker)
  local kept = by_worker[s.worker]
  if not kept or kept.generation ~= gen then
    kept = { generation = gen, sums = {} } -- a new worker keeps nothing yet
    by_worker[s.worker] = kept
  end
  return kept.sums
end

function Session:fill(w, p, seed, role)
  local plan = fill_plan(w, p)
  local device_init, custom = plan.device_init, plan.custom
  local sums = {}
  if #device_init > 0 then
    sums = self:call({ op = "init", seed = seed, buffers = device_init }).checksums
  end
  if #custom > 0 then
    -- The worker keeps keyed uploads: the same (workload, size, seed)
    -- comes back in every trial and every version, and a scale-22 graph
    -- (554 MB) re-sent each time cost more than the kernels. Only the
    -- buffers it lacks are built, with what their inits come after.
    local kept = kept_of(self)
    local missing, sent = {}, {}
    for _, name in ipairs(custom) do
      if not self:call({ op = "upload", name = name, key = input_key(w, p, seed, name) }).cached then
        missing[#missing + 1] = name
      end
    end
    local function send(names)
      local data, f = workload.host_inputs(w, p, seed, names)
      if not data then error(f, 0) end
      for _, name in ipairs(names) do
        self:call_with_bytes({ op = "upload", name = name, key = input_key(w, p, seed, name) }, "data", data[name])
        sent[name] = true
      end
    end
    if #missing > 0 then send(missing) end
    -- The worker's own checksum, so that before and after are comparable.
    local now = self:call({ op = "checksum", buffers = custom }).checksums
    -- A kept copy that differs from the bytes first sent (a kernel wrote
    -- past its buffers into it) is built and sent again.
    local stale = {}
    for _, name in ipairs(custom) do
      local key = input_key(w, p, seed, name)
      if sent[name] or not kept[key] then kept[key] = now[name]
      elseif kept[key] ~= now[name] then stale[#stale + 1] = name end
    end
    if #stale > 0 then
      send(stale)
      now = self:call({ op = "checksum", buffers = custom }).checksums
      for _, name in ipairs(stale) do kept[input_key(w, p, seed, name)] = now[name] end
    end
    for k, v in pairs(now) do sums[k] = v end
  end
  if #plan.floats > 0 then self:call { op = "poison", buffers = plan.floats } end
  if #plan.ints > 0 then self:call { op = "poison", buffers = plan.ints, byte = int_poison(seed, role) } end
  return sums
end

local function output_key(base, w, p, seed, name)
  return "out|" .. tostring(base.module) .. "|" .. input_key(w, p, seed, name)
end

-- The baseline's outputs for (base, w, p, seed) back as "<name>@ref" from
-- the worker's keep, when it holds every one intact. Returns true then.
function Session:recall_reference(base, w, p, seed)
  local sums, keys = kept_of(self), {}
  for i, name in ipairs(w.outputs) do
    keys[i] = output_key(base, w, p, seed, name)
    if not sums[keys[i]] then return false end
  end
  self:call { op = "snapshot", buffers = w.outputs, as = "ref" } -- makes the "@ref" buffers
  for i, name in ipairs(w.outputs) do
    if not self:call({ op = "upload", name = name .. "@ref", key = keys[i] }).cached then return false end
  end
  local now = self:call({ op = "checksum", buffers = M.ref_names(w) }).checksums
  for i, name in ipairs(w.outputs) do
    local key = keys[i]
    if now[name .. "@ref"] ~= sums[key] then
      sums[key] = nil -- changed while kept: run the baseline again
      return false
    end
  end
  self.ref_sums = now
  return true
end

-- The baseline store's key for the outputs at (p, seed) and their size in
-- bytes, or nil where this session keeps none on disk (no store, a
-- baseline not built here, a spec with no hash).
function Session:store_key(base, w, p, seed)
  local build = self.built[base.module]
  if not self.store or not build or not w.sha256 then return nil end
  local counts, f = workload.counts(w, p)
  if not counts then error(f, 0) end
  local outputs, bytes = {}, 0
  for i, name in ipairs(w.outputs) do
    local b = w.buffer_by_name[name]
    outputs[i] = { name = name, type = b.type, count = counts[name] }
    bytes = bytes + counts[name] * types.get(b.type).size
  end
  return baseline_store.key { build = build, entry = base.entry, spec = w.sha256, params = p, seed = seed,
                              outputs = outputs }, bytes
end

-- The baseline's outputs for (p, seed) from the store into "<name>@ref",
-- and into the worker's keep. True when it held an entry whole and the
-- worker's copies hash as the entry's bytes do.
function Session:recall_stored(base, w, p, seed, key)
  local got = baseline_store.lookup(self.store.dir, self.store.owned, key, w.outputs)
  if not got then return false end -- a miss, or a refused folder: the baseline runs
  self:call { op = "snapshot", buffers = w.outputs, as = "ref" } -- makes the "@ref" buffers
  for _, name in ipairs(w.outputs) do
    self:call_with_bytes({ op = "upload", name = name .. "@ref", key = output_key(base, w, p, seed, name) }, "data",
      got[name])
  end
  local now = self:call({ op = "checksum", buffers = M.ref_names(w) }).checksums
  for _, name in ipairs(w.outputs) do
    if now[name .. "@ref"] ~= hash.sha256(got[name]) then return false end
  end
  local sums = kept_of(self)
  for _, name in ipairs(w.outputs) do sums[output_key(base, w, p, seed, name)] = now[name .. "@ref"] end
  self.ref_sums = now
  return true
end

-- The "@ref" copies, just taken from a run, into the store. A store that
-- cannot take them fails nothing: the next process runs the baseline.
function Session:store_outputs(w, key)
  local outputs = {}
  for i, name in ipairs(w.outputs) do
    local bytes = protocol.unbase64(self:call({ op = "read", buffer = name .. "@ref" }).data_b64 or "")
    if not bytes or hash.sha256(bytes) ~= self.ref_sums[name .. "@ref"] then return end
    outputs[i] = { name = name, bytes = bytes }
  end
  baseline_store.save(self.store.dir, self.store.owned, key, outputs)
end

-- The baseline's outputs as "<name>@ref": the worker's kept copy, else
-- the store's, else a run on the seed's inputs (filled as the baseline's:
-- integer outputs get its poison byte).
-- The worker keeps the outputs too: every trial of a walk or a search
-- judges against the same baseline at the same few (params, seed), and a
-- brute-force baseline (raytrace v0: 3.8 s at the bench scene) cost more
-- than the candidates. The store keeps them for the next process (emu).
function Session:baseline_outputs(base, w, p, seed, opts)
  if self:recall_reference(base, w, p, seed) then return "kept" end
  local key, bytes
  if not (opts and opts.store == false) then key, bytes = self:store_key(base, w, p, seed) end
  if key and self:recall_stored(base, w, p, seed, key) then return "stored" end
  self:fill(w, p, seed, "baseline")
  self:run(base, w, p)
  self:call { op = "snapshot", buffers = w.outputs, as = "ref" }
  -- The copy lies in the candidate's address space: its checksum, taken
  -- now, shows a candidate that wrote into it.
  self.ref_sums = self:call({ op = "checksum", buffers = M.ref_names(w) }).checksums
  local sums = kept_of(self)
  for _, name in ipairs(w.outputs) do
    local okey = output_key(base, w, p, seed, name)
    if self:call({ op = "keep", buffer = name .. "@ref", key = okey }).kept then
      sums[okey] = self.ref_sums[name .. "@ref"]
    end
  end
  if key and bytes <= baseline_store.MAX_BYTES then self:store_outputs(w, key) end
  return "ran"
end

-- The baseline's outputs as "<name>@ref" (baseline_outputs), then the same
-- inputs filled again for the run to judge. Returns the input checksums of
-- that fill, and how the outputs came. Whatever a kernel can get wrong
-- while the baseline runs is the baseline's: it is raised as baseline_broken.
function Session:reference(base, w, p, seed, opts)
  local how, f = verdicts.catch(self.baseline_outputs, self, base, w, p, seed, opts)
  if not how then
    -- What a kernel did wrong is the baseline's here; what is not about a
    -- kernel (the spec's run raising, the engine, the backend) stays so.
    if (verdicts.get(f.verdict) or {}).blame ~= "candidate" then error(f, 0) end
    verdicts.raise("baseline_broken", string.format("the baseline (%s) failed: %s: %s", base.file, f.verdict, f.message),
      { cause = f.verdict })
  end
  return self:fill(w, p, seed, "candidate"), how
end

function M.ref_names(w)
  local names = {}
  for i, name in ipairs(w.outputs) do names[i] = name .. "@ref" end
  return names
end

function Session:check_canaries()
  self:call { op = "canaries" }
end

-- Every output compared with its reference, each result tagged with its buffer.
function Session:compare_outputs(w)
  if self.ref_sums then
    local now = self:call({ op = "checksum", buffers = M.ref_names(w) }).checksums
    for _, name in ipairs(M.ref_names(w)) do
      if now[name] ~= self.ref_sums[name] then
        verdicts.raise("out_of_bounds", string.format("the kernel wrote into the reference copy of '%s'", name:match("^(.*)@")))
      end
    end
  end
  return self:compare_against(w, "ref")
end

-- Every output compared with its copy "<name>@<as>" (another snapshot, or
-- the C reference's outputs uploaded there), each result tagged with its buffer.
function Session:compare_against(w, as, of)
  local results = {}
  for _, name in ipairs(w.outputs) do
    local tol = workload.tolerance(w, name)
    local c = self:call { op = "compare", buffer = of and (name .. "@" .. of) or name, against = name .. "@" .. as,
                          rtol = tol.rtol, atol = tol.atol }
    c.buffer = name
    results[#results + 1] = c
  end
  return results
end

function M.mismatch(c)
  return string.format("%s: %d of %d elements off (first at index %d, max abs %.3g, max rel %.3g, tolerance %.3g%s)",
    c.buffer, c.bad_count, c.count, (c.first_bad or 1) - 1, c.max_abs, c.max_rel, c.tolerance,
    c.nonfinite > 0 and string.format(", %d not finite", c.nonfinite) or "")
end

-- The seeds of timed samples: sample n regenerates its inputs from
-- SAMPLE_SEED + n (protocol.lua, "time"), far from the trials' seeds.
M.SAMPLE_SEED = 1000003

-- The requests that set the buffers up for one timed sample, as a fill
-- leaves them: every generated buffer generated again (the worker steps
-- the seed per sample, so a kernel that keys a cache on its inputs finds
-- new ones each time), every host-built one restored from the copy taken
-- here, every pure output poisoned again (so no sample finds the output of
-- the one before). Call it right after a fill at params p.
function Session:sample_setup(w, p)
  local plan, setup = fill_plan(w, p), {}
  if #plan.device_init > 0 then
    setup[#setup + 1] = { op = "init", seed = M.SAMPLE_SEED, seed_step = 1, buffers = plan.device_init }
  end
  if #plan.custom > 0 then
    self:call { op = "snapshot", buffers = plan.custom, as = "fresh" }
    setup[#setup + 1] = { op = "restore", buffers = plan.custom, from = "fresh" }
  end
  if #plan.floats > 0 then setup[#setup + 1] = { op = "poison", buffers = plan.floats } end
  if #plan.ints > 0 then setup[#setup + 1] = { op = "poison", buffers = plan.ints, byte = INT_POISON[1] } end
  return setup
end

-- The buffers hold whatever size correctness ran last: sets size p up
-- again (seed 1) and returns the candidate's launches there, to replay,
-- and the setup of each timed sample.
function Session:launches_at(k, w, p)
  self:alloc(w, p)
  self:fill(w, p, 1)
  local setup = self:sample_setup(w, p) -- before the run: its copies are of the inputs as filled
  local steps, data_dependent = self:run(k, w, p)
  if data_dependent then
    -- A run whose launches depended on the data (a `run` that read a
    -- buffer) replays those same launches every sample: its inputs are
    -- generated again from the seed they were recorded with.
    for _, step in ipairs(setup) do
      if step.op == "init" then step.seed, step.seed_step = 1, 0 end
    end
  end
  return steps, setup
end

-- A stage from a raised failure, keeping what the record needs.
function M.stage_of(f)
  return { verdict = f.verdict, message = f.message, signal = f.signal, code = f.code, stderr = f.stderr,
           cause = f.cause }
end

function M.guarded(fn, ...)
  local st, f = verdicts.catch(fn, ...)
  return st or M.stage_of(f)
end

return M
