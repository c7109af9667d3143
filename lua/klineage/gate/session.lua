-- One worker, driven for one evaluation: the requests of the worker
-- protocol (worker/protocol.lua) that the gate's stages are made of. Every
-- method raises a failure (klineage.verdicts) when a request fails, so the
-- stages read straight; the stage that catches it decides the verdict.
--
--   session.new{ pool, worker = i, timeout = s, async = bool } -> Session
--   s:call(req [, timeout]) -> reply
--   s:load(k)                     the prepared kernel k into the worker, once
--   s:alloc(w, p)                 every buffer of workload w at params p
--   s:fill(w, p, seed) -> input checksums
--   s:run(k, w, p) -> steps       one run (a launch, or w.run's sequence)
--   s:reference(base, w, p, seed) -> checksums: the baseline's outputs kept
--       as "<name>@ref", the inputs filled again
--   s:compare_outputs(w) -> { compare replies, each with .buffer }
--   s:launches_at(k, w, p) -> steps   set size p up afresh, for timing
--   session.guarded(fn, ...) -> fn's stage, or a stage made of the failure
--       it raised ({ verdict, message, signal, code, stderr })
local annotations = require "klineage.annotations"
local kernel = require "klineage.gate.kernel"
local protocol = require "klineage.worker.protocol"
local verdicts = require "klineage.verdicts"
local workload = require "klineage.workload"

local M = {}

local Session = {}
Session.__index = Session

function M.new(opts)
  return setmetatable({ pool = opts.pool, worker = opts.worker or 1, timeout = opts.timeout or opts.pool.timeout,
                        async = opts.async, loaded = {}, generation = nil }, Session)
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
  if self.pool.backend == "emu" then
    -- The engine compiles (g++, a trusted compiler on the kernel's text, as
    -- NVRTC is); the worker, sandboxed, only loads the shared object.
    local built, f = require("klineage.emu").build(k.source, { name = k.file })
    if not built then
      if f.verdict == "io_error" then error(f, 0) end
      -- a construct the emulator lacks, or one g++ rejects after NVRTC accepted it
      verdicts.raise("unsupported", "emu: " .. f.message)
    end
    req.source, req.name, req.library = k.source, k.file, built.path
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

-- The launch request for kernel k at params p.
function Session:launch_request(k, w, p, bind)
  bind = bind or {}
  local entry = bind.kernel or k.entry
  local kinds = k.kinds
  if bind.kernel and bind.kernel ~= k.entry then
    local f
    kinds, f = kernel.signature(k.source, bind.kernel)
    if not kinds then error(f, 0) end
  end
  local g = M.geometry(k, p, bind, bind.kernel)
  if not g.allowed then verdicts.raise("not_allowed", g.why) end
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
        verdicts.raise("bad_input", string.format("argument %d (%s) of %s: the kernel's parameter is %s", i, a, entry, tostring(kind)))
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
          local f
          data, f = workload.host_inputs(w, p, seed)
          if not data then error(f, 0) end
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

-- Runs the baseline on the seed's inputs, keeps its outputs as "<name>@ref"
-- and fills the same inputs again for the run to judge. Returns the input
-- checksums of that second fill. Whatever goes wrong while the baseline
-- runs is the baseline's: it is raised as baseline_broken.
function Session:reference(base, w, p, seed)
  self:fill(w, p, seed)
  local ok, f = verdicts.catch(self.run, self, base, w, p)
  if not ok then
    if f.verdict == "worker_lost" or f.verdict == "io_error" then error(f, 0) end
    verdicts.raise("baseline_broken", string.format("the baseline (%s) failed: %s: %s", base.file, f.verdict, f.message),
      { cause = f.verdict })
  end
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

-- The buffers hold whatever size correctness ran last: sets size p up
-- again (seed 1) and returns the candidate's launches there, to replay.
function Session:launches_at(k, w, p)
  self:alloc(w, p)
  self:fill(w, p, 1)
  return self:run(k, w, p)
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
