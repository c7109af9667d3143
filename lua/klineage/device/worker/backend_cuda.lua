-- The cuda worker backend: one GPU context in this process, driven by the
-- requests of protocol.lua. The pool runs it as `klineage worker --backend
-- cuda` with CUDA_VISIBLE_DEVICES set to one device, so a kernel that
-- faults or hangs takes down only this process.
--
-- Inputs are generated on the device by gpu/device/randgen.cu, the same
-- algorithm as the host generator (engine/core/randgen.h), so both backends
-- see bit-identical inputs. Outputs are poisoned with 0xFF bytes (NaN in
-- every float type). Checksums are computed on the device
-- (gpu/device/checksum.cu). Timing is CUPTI activity on L2-flushed samples
-- (measure/gpu_timer.lua); metrics come from the CUPTI range profiler.
local cuda = require "kl.cuda"
local cupti = require "kl.cupti"
local cache = require "klineage.device.cache"
local randgen = require "kl.randgen"
local host = require "kl.host"
local proc = require "kl.proc"
local protocol = require "klineage.device.worker.protocol"
local resident = require "klineage.device.worker.resident"
local types = require "klineage.base.types"
local verdicts = require "klineage.base.verdicts"
local files = require "klineage.base.files"
local gpu_timer = require "klineage.device.measure.gpu_timer"
local sampler = require "klineage.device.measure.sampler"

local M = {}

-- Modules kept loaded at once (worker/resident.lua says why there is a bound).
M.RESIDENT_MODULES = 16

-- Canaries: each buffer lies between two regions of CANARY_BYTES set to
-- CANARY_BYTE, checked after the candidate's runs (the "canaries" request
-- and the end of "time"), so that a write out of bounds on the GPU is a
-- verdict and not luck. A write further away than the canary lands
-- elsewhere: the reference copy is checksummed for that (gate/session.lua).
M.CANARY_BYTES = 16384
local CANARY_BYTE = 0xC3
local CANARY = string.rep(string.char(CANARY_BYTE), M.CANARY_BYTES)

local Worker = {}
Worker.__index = Worker

-- The kl_dtype codes of engine/core/randgen.h, by type name (kl.randgen
-- lists the names in code order), and its kl_init_kind codes.
local DTYPE = {}
for i, name in ipairs(randgen.types()) do DTYPE[name] = i - 1 end
local INIT = { uniform = 1, normal = 2, int = 3 }
local function is_integer(name) local t = types.get(name) return t ~= nil and t.integer == true end

local function bad(message) verdicts.raise("bad_request", message) end

-- A device error after a launch is sticky: the context is lost, and so is
-- this worker (it exits after replying, and the pool starts a fresh one).
local function fault(message) verdicts.raise("fault", message) end

function M.new()
  local ok, why = cuda.load()
  if not ok then return nil, "no CUDA driver: " .. why end
  local devices = cuda.devices()
  if #devices == 0 then return nil, "no CUDA device visible" end
  local dev = devices[1]
  local ctx = cuda.context(0)
  local arch = string.format("sm_%d%d", dev.major, dev.minor)
  local helpers = {}
  for _, h in ipairs({ { "randgen.cu", "kl_randgen_kernel" }, { "checksum.cu", "kl_checksum" },
                          { "compare.cu", "kl_compare" } }) do
    local src = assert(files.read_text(host.home .. "/gpu/device/" .. h[1]))
    local r, err = cache.compile(src, { arch = arch, name = h[1], options = h[3] })
    if not r then return nil, "cannot compile gpu/device/" .. h[1] .. ": " .. err end
    local mod = assert(ctx:load(r.cubin))
    helpers[h[2]] = { module = mod, fn = assert(mod:func(h[2])) }
  end
  return setmetatable({
    ctx = ctx, dev = dev, arch = arch, helpers = helpers,
    generator = helpers.kl_randgen_kernel.fn, checksummer = helpers.kl_checksum.fn,
    comparer = helpers.kl_compare.fn,
    checksum_out = assert(ctx:alloc(8)), compare_stats = assert(ctx:alloc(48)),
    modules = resident.new(M.RESIDENT_MODULES, function(e) e.mod:close() end), buffers = {},
    optin = setmetatable({}, { __mode = "k" }),
  }, Worker)
end

function Worker:buffer(name)
  local b = self.buffers[name]
  if not b then bad("no buffer '" .. tostring(name) .. "'") end
  return b
end

function Worker:sync(what)
  local ok, err = self.ctx:synchronize()
  if not ok then fault(what .. ": " .. err) end
end

function Worker:hello()
  local d = self.dev
  return {
    op = "ready", protocol = protocol.VERSION, backend = "cuda", pid = proc.getpid(),
    device = { index = 0, name = d.name, arch = self.arch, sm_count = d.sms,
               clock_mhz = (d.clock_khz or 0) // 1000, memory_bytes = d.memory,
               driver = cuda.driver_version(), l2_bytes = d.l2_bytes },
  }
end

-- A module already resident (the same id: the engine names a module by
-- the hash of its source) is not loaded again.
function Worker:load(req)
  local entry = self.modules:get(req.module)
  if not entry then
    local image, perr = protocol.payload(req, "cubin")
    if not image then bad("load: " .. perr.message) end
    local mod, err = self.ctx:load(image)
    if not mod then return nil, verdicts.failure("bad_request", "load: " .. err) end
    entry = { mod = mod, fns = {} }
    self.modules:put(req.module, entry)
  end
  local functions = {}
  for _, name in ipairs(req.kernels or {}) do
    local fn = self:func(entry, name)
    local a = fn:attributes()
    functions[name] = { registers = a.registers, smem = a.smem, max_threads = a.max_threads,
                        local_bytes = a.local_bytes }
  end
  return { functions = functions }
end

function Worker:func(entry, name)
  local fn = entry.fns[name]
  if not fn then
    local err
    fn, err = entry.mod:func(name)
    if not fn then bad("no kernel '" .. tostring(name) .. "': " .. err) end
    entry.fns[name] = fn
  end
  return fn
end

function Worker:alloc(req)
  for _, b in pairs(self.buffers) do (b.raw or b.mem):close() end
  self.buffers = {}
  for _, spec in ipairs(req.buffers) do
    local size = randgen.size(spec.type)
    local count = protocol.integer(spec.count)
    if not size or not count or count < 0 then bad("alloc: bad buffer " .. tostring(spec.name)) end
    local body, c = math.max(count * size, 1), M.CANARY_BYTES
    local raw, err = self.ctx:alloc(body + 2 * c)
    if not raw then return nil, verdicts.failure("bad_request", "alloc " .. spec.name .. ": " .. err) end
    local guards = { raw:view(0, c), raw:view(c + body, c) }
    for _, g in ipairs(guards) do assert(g:fill_u32(CANARY_BYTE * 0x01010101)) end
    self.buffers[spec.name] = { mem = raw:view(c, body), raw = raw, guards = guards, type = spec.type,
                                count = count, size = count * size }
  end
  return {}
end

-- Every buffer's canaries intact, or the failure out_of_bounds naming the
-- buffers whose canaries changed (and which side).
function Worker:canaries()
  local hit = {}
  for name, b in pairs(self.buffers) do
    for side, g in ipairs(b.guards or {}) do
      if assert(g:download()) ~= CANARY then
        hit[#hit + 1] = string.format("%s (%s)", name, side == 1 and "before its start" or "past its end")
      end
    end
  end
  if #hit == 0 then return {} end
  table.sort(hit)
  return nil, verdicts.failure("out_of_bounds", "the kernel wrote outside its buffers: " .. table.concat(hit, ", "))
end

-- Generates the buffers of an init request from seed (no sync, no checksum).
function Worker:generate(buffers, seed)
  for _, spec in ipairs(buffers) do
    local b = self:buffer(spec.name)
    local init, lo, hi = spec.init, 0, 0
    if type(init) == "table" then init, lo, hi = init[1], protocol.integer(init[2]), protocol.integer(init[3]) end
    if init == "zeros" then
      b.mem:fill_u32(0)
    else
      if not INIT[init] then bad("init: unknown init '" .. tostring(init) .. "'") end
      if init ~= "int" and is_integer(b.type) then bad("init: " .. init .. " does not apply to " .. b.type) end
      if init == "int" and (not lo or not hi or lo > hi) then bad("init: int needs integers lo <= hi") end
      if b.count > 0 then
        local ok, err = self.generator:launch {
          grid = math.min((b.count + 255) // 256, self.dev.sms * 32), block = 256,
          args = { b.mem, { "u64", b.count }, { "i32", DTYPE[b.type] }, { "i32", INIT[init] },
                   { "i64", lo }, { "i64", hi }, { "u64", seed }, { "u64", protocol.integer(spec.stream) or 0 },
                   { "u64", 0 } },
        }
        if not ok then fault("init: " .. err) end
      end
    end
  end
end

function Worker:init(req)
  local seed = protocol.integer(req.seed)
  if not seed then bad("init: seed must be an integer") end
  self:generate(req.buffers, seed)
  self:sync("init")
  local names = {}
  for i, spec in ipairs(req.buffers) do names[i] = spec.name end
  return self:checksum({ buffers = names })
end

-- Keyed bytes (an upload with a key, a kept buffer) stay on the device
-- (protocol.lua, "upload" and "keep"), up to a quarter of the device's
-- memory, the least recently used dropped first.
local function stash_of(self)
  self.stash = self.stash or { bytes = 0, entries = {}, clock = 0 }
  self.stash.clock = self.stash.clock + 1
  return self.stash
end

local function stash_drop(stash, k)
  stash.bytes = stash.bytes - stash.entries[k].size
  stash.entries[k].mem:close()
  stash.entries[k] = nil
end

-- A device copy of buffer b under key, when it fits the budget.
function Worker:stash_put(key, b)
  local stash = stash_of(self)
  if stash.entries[key] then stash_drop(stash, key) end
  local budget = (self.dev.memory or 0) // 4
  if b.size == 0 or b.size > budget then return false end
  while stash.bytes + b.size > budget do
    local oldest, at
    for k, e in pairs(stash.entries) do
      if not at or e.used < at then oldest, at = k, e.used end
    end
    stash_drop(stash, oldest)
  end
  local mem = self.ctx:alloc(b.size)
  if mem and mem:copy_from(b.mem) then
    stash.entries[key] = { mem = mem, size = b.size, used = stash.clock }
    stash.bytes = stash.bytes + b.size
    return true
  end
  if mem then mem:close() end
  return false
end

function Worker:upload(req)
  local b = self:buffer(req.name)
  local key, probe = protocol.upload_key(req)
  local stash = stash_of(self)
  local hit = key and stash.entries[key]
  if hit and hit.size == b.size then
    if b.size > 0 then assert(b.mem:copy_from(hit.mem)) end
    hit.used = stash.clock
    return { cached = true }
  end
  if hit then stash_drop(stash, key) end -- the same key at another size: a stale entry
  if probe then return { cached = false } end
  local data, err = protocol.payload(req, "data")
  if not data then bad("upload: " .. err.message) end
  if #data ~= b.size then bad(string.format("upload: %d bytes for a buffer of %d", #data, b.size)) end
  if #data > 0 then assert(b.mem:upload(data)) end
  if key then self:stash_put(key, b) end
  return { cached = false }
end

function Worker:keep(req)
  return { kept = self:stash_put(req.key, self:buffer(req.buffer)) }
end

function Worker:poison(req)
  local byte = protocol.integer(req.byte) or 0xFF
  for _, name in ipairs(req.buffers) do assert(self:buffer(name).mem:fill_u32(byte * 0x01010101)) end
  return {}
end

-- Copies "<name>@<from>" (a snapshot) back into each buffer.
function Worker:restore(req)
  for _, name in ipairs(req.buffers) do
    local copy = self.buffers[name .. "@" .. tostring(req.from)]
    if not copy then bad("restore: no snapshot " .. name .. "@" .. tostring(req.from)) end
    if copy.size > 0 then assert(self:buffer(name).mem:copy_from(copy.mem)) end
  end
  return {}
end

-- Sets the buffers up for timed sample n (protocol.lua, "time"), outside
-- the timed region: init steps regenerate from seed + n, restore and
-- poison steps as their requests.
function Worker:sample_setup(setup, n)
  for _, step in ipairs(setup) do
    if step.op == "init" then
      local seed = protocol.integer(step.seed)
      if not seed then bad("time: a before_sample init needs an integer seed") end
      self:generate(step.buffers, seed + n * (protocol.integer(step.seed_step) or 1))
    elseif step.op == "restore" or step.op == "poison" then
      self[step.op](self, step)
    else
      bad("time: before_sample holds init, restore and poison steps only")
    end
  end
end

function Worker:zero(req)
  assert(self:buffer(req.buffer).mem:fill_u32(0))
  return {}
end

-- Resolves a launch request into a closure that launches without checking
-- anything again: the timing loop calls it many times.
function Worker:prepare(req)
  local entry = self.modules:get(req.module)
  if not entry then bad("no module '" .. tostring(req.module) .. "'") end
  local fn = self:func(entry, req.kernel)
  local args = {}
  for i, a in ipairs(req.args) do
    if a[1] == "buf" then args[i] = self:buffer(a[2]).mem else args[i] = { a[1], a[2] } end
  end
  local smem = protocol.integer(req.smem) or 0
  if smem > 48 * 1024 and (self.optin[fn] or 0) < smem then
    local ok, err = fn:set_max_dynamic_smem(smem)
    if not ok then verdicts.raise("launch_error", err) end
    self.optin[fn] = smem
  end
  local launch = { grid = req.grid, block = req.block, smem = smem, args = args }
  return function() return fn:launch(launch) end
end

function Worker:launch(req)
  local run = self:prepare(req)
  local a, b = self.ctx:event(), self.ctx:event()
  a:record()
  local ok, err = run()
  if not ok then return nil, verdicts.failure("launch_error", err) end
  b:record()
  self:sync(req.kernel)
  return { ms = a:elapsed(b) }
end

function Worker:read(req)
  local b = self:buffer(req.buffer)
  local size = randgen.size(b.type)
  if req.index ~= nil then
    local i = protocol.integer(req.index)
    if not i or i < 0 or i >= b.count then bad("read: index out of range") end
    return { value = randgen.get(b.type, assert(b.mem:download(size, i * size)), 1) }
  end
  return { data_b64 = protocol.base64(b.size > 0 and assert(b.mem:download()) or "") }
end

function Worker:snapshot(req)
  for _, name in ipairs(req.buffers) do
    local b = self:buffer(name)
    local key = name .. "@" .. req.as
    local old = self.buffers[key]
    if old then old.mem:close() end
    local mem = assert(self.ctx:alloc(math.max(b.size, 1)))
    if b.size > 0 then assert(mem:copy_from(b.mem)) end
    self.buffers[key] = { mem = mem, type = b.type, count = b.count, size = b.size }
  end
  return {}
end

-- On the device (gpu/device/compare.cu), with kl.randgen.compare's
-- semantics and result: downloading both outputs would cost more than the
-- kernels for the large shapes.
function Worker:compare(req)
  local out, ref = self:buffer(req.buffer), self:buffer(req.against)
  if out.type ~= ref.type or out.count ~= ref.count then bad("compare: buffers differ in type or size") end
  local rtol, atol = req.rtol or 0, req.atol or 0
  local is_float = not is_integer(out.type)
  local stats = self.compare_stats
  assert(stats:upload(string.pack("<I8I8I8I8I8i8", 0, 0, 0, 0, 0, -1))) -- first bad: all ones
  local function pass(k, tol)
    if out.count == 0 then return end
    local ok, err = self.comparer:launch { grid = math.max(1, math.min((out.count + 255) // 256, self.dev.sms * 8)),
      block = 256, args = { out.mem, ref.mem, { "u64", out.count }, { "i32", DTYPE[out.type] }, { "i32", k },
        { "f64", tol }, stats } }
    if not ok then fault("compare: " .. err) end
  end
  local max_ref = 0
  if is_float then
    pass(0, 0)
    self:sync("compare")
    max_ref = string.unpack("<d", assert(stats:download()))
  end
  local tol = atol + rtol * max_ref
  pass(1, tol)
  self:sync("compare")
  local _, max_abs, max_rel, nbad, nonfinite, first = string.unpack("<dddI8I8i8", assert(stats:download()))
  return { pass = nbad == 0, max_abs = max_abs, max_rel = max_rel, max_ref = max_ref,
    tolerance = is_float and tol or 0, bad_count = nbad, nonfinite = nonfinite, count = out.count,
    first_bad = nbad > 0 and first + 1 or nil }
end

function Worker:checksum(req)
  local sums = {}
  for _, name in ipairs(req.buffers) do
    local b = self:buffer(name)
    assert(self.checksum_out:fill_u32(0))
    local ok, err = self.checksummer:launch { grid = math.max(1, math.min((b.size // 8 + 255) // 256, self.dev.sms * 8)),
      block = 256, args = { b.mem, { "i64", b.size }, self.checksum_out } }
    if not ok then fault("checksum: " .. err) end
    self:sync("checksum")
    sums[name] = string.format("%016x", string.unpack("<I8", self.checksum_out:download()))
  end
  return { checksums = sums }
end

-- A sequence of launch and zero steps, as one run.
function Worker:sequence(steps)
  local run = {}
  for i, step in ipairs(steps) do
    if step.op == "launch" then
      run[i] = self:prepare(step)
    elseif step.op == "zero" then
      local mem = self:buffer(step.buffer).mem
      run[i] = function() return mem:fill_u32(0) end
    elseif step.op == "vendor" then
      run[i] = self:vendor_call(step)
    else
      bad("a sequence holds launch, zero and vendor steps only")
    end
  end
  return function()
    for _, f in ipairs(run) do
      local ok, err = f()
      if not ok then return nil, err end
    end
    return true
  end
end

-- A vendor library routine (kl.vendor) as a closure over the buffers'
-- device addresses: the bar a lineage is judged against, timed like a kernel.
function Worker:vendor_call(step)
  local vendor = require "kl.vendor"
  local ok, err = vendor.load(step.library or "cublas")
  if not ok then verdicts.raise("unsupported", err) end
  local fn = vendor[step.routine]
  if type(fn) ~= "function" or step.routine == "load" then bad("vendor: unknown routine " .. tostring(step.routine)) end
  local args = {}
  for i, a in ipairs(step.args) do
    if a[1] == "buf" then args[i] = self:buffer(a[2]).mem.address else args[i] = a[2] end
  end
  return function() return fn(table.unpack(args)) end
end

-- One vendor call, synchronized: for checking its result like a kernel's.
function Worker:vendor(req)
  local ok, detail = self:vendor_call(req)()
  if not ok then return nil, verdicts.failure("launch_error", detail) end
  self:sync("vendor " .. tostring(req.routine))
  -- what the routine says it chose (cuDNN: the algorithm's number)
  return { detail = math.type(detail) and detail or nil }
end

function Worker:time(req)
  local run = self:sequence(req.sequence)
  self.timer = self.timer or gpu_timer.new(self.ctx, self.dev)
  local setup, n = req.before_sample, 0
  local result = sampler.run {
    sample = function()
      if setup then
        n = n + 1
        self:sample_setup(setup, n)
      end
      local ns, info = self.timer:sample(run)
      if not ns then fault("time: " .. info.message) end
      return ns, info
    end,
    warmup = protocol.integer(req.warmup), min_samples = protocol.integer(req.min_samples),
    max_samples = protocol.integer(req.max_samples), max_seconds = req.max_seconds,
    noise = req.target_noise,
  }
  local clocks, throttled, event_ns = {}, 0, {}
  for i, info in ipairs(result.infos) do
    if info.clock_mhz then clocks[#clocks + 1] = info.clock_mhz end
    if info.throttled then throttled = throttled + 1 end
    event_ns[i] = info.event_ns
  end
  table.sort(clocks)
  -- Many launches ran: a write out of bounds in any of them shows now.
  local intact, cf = self:canaries()
  if not intact then return nil, cf end
  local ms = {}
  for i, ns in ipairs(result.samples) do ms[i] = ns / 1e6 end
  return {
    samples_ms = ms, median_ms = result.median / 1e6, ci_ms = { result.ci[1] / 1e6, result.ci[2] / 1e6 },
    noise = result.noise, converged = result.converged, stop = result.reason,
    clock_mhz = clocks[(#clocks + 1) // 2], max_clock_mhz = self.timer.max_clock_mhz,
    throttled = throttled > 0, throttled_samples = throttled,
    event_median_ms = require("klineage.device.measure.stats").median(event_ns) / 1e6,
    kernels = result.infos[1] and result.infos[1].kernels or 0, source = "cupti",
  }
end

function Worker:metrics(req)
  local run = self:sequence(req.sequence)
  local m, err = cupti.metrics(self.ctx, req.names, 256)
  if not m then return nil, verdicts.failure("unsupported", "metrics: " .. err) end
  local passes = m.passes
  local ok, berr = m:begin()
  if not ok then m:close() return nil, verdicts.failure("unsupported", "metrics: " .. berr) end
  local rok, rerr = run()
  if not rok then m:close() fault("metrics: " .. rerr) end
  self:sync("metrics")
  local ranges, ferr = m:finish()
  m:close()
  if not ranges then return nil, verdicts.failure("unsupported", "metrics: " .. ferr) end
  -- One range per kernel launch. Counters (.sum) add up over the launches
  -- of the run; rates and percentages are weighted by each launch's time.
  local values, weight = {}, 0
  for _, r in ipairs(ranges) do weight = weight + (r.values["gpu__time_duration.sum"] or 1) end
  for _, name in ipairs(req.names) do
    local v = 0
    for _, r in ipairs(ranges) do
      local w = (r.values["gpu__time_duration.sum"] or 1) / weight
      v = v + (name:match("%.sum$") and r.values[name] or r.values[name] * w)
    end
    values[name] = v
  end
  return { values = values, passes = passes, ranges = ranges }
end

function Worker:bye()
  if self.timer then self.timer:close() end
  return {}
end

return M
