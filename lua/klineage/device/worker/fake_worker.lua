-- The fake worker backend: speaks the real protocol (protocol.lua) over
-- real pipes, with host buffers and a few kernels written in Lua, and can be
-- told by a request's `fake` field to crash, hang, write garbage or exit.
-- The pool's verdict handling (fault, timeout, dead pipe) is tested against
-- it at the process level, in CI, with no GPU.
--
-- Kernels (load any module, launch by name; args as in the protocol):
--   saxpy(n, a, x, y)              y[i] = a * x[i] + y[i], f32
--   saxpy_off_by_one(n, a, x, y)   the same, but skips the last element
--   copy(n, src, dst)              dst[i] = src[i]
--   noop()
--   fault()                        replies verdict "fault", as a sticky device error
--   hang()                         never returns (the pool's timeout ends it)
--   saxpy_slow(n, a, x, y)         saxpy after 20 ms (a long run to interrupt)
--   poly(n, degree, x, y, z)       y[i] += p(x[i]), z[i] = p(x[i]) / 2, f32
--   poly_skip_written, poly_own_last, poly_memo (same arguments)
--                                  poly, skipping the work where an earlier
--                                  launch left the answer (tests/adversarial/timing/)
--   saxpy_writes_reference(n, a, x, y)  saxpy, then it changes y@ref, the
--                                  reference copy the gate compares y with, as
--                                  a kernel reaching it by address would
--   saxpy_poisons_kept(n, a, x, y)  saxpy_off_by_one, then it finds every
--                                  kept copy ("keep") equal to y@ref and puts
--                                  its own wrong y there, as a kernel that
--                                  scanned device memory would: a later trial
--                                  that trusted the copy would pass it
--   saxpy_killed_once(n, a, x, y)  the first time (no file at
--                                  $KLINEAGE_FAKE_KILLED_ONCE yet) creates that
--                                  file and SIGKILLs its own worker, as the OOM
--                                  killer or a person would; then it is saxpy
local protocol = require "klineage.device.worker.protocol"
local verdicts = require "klineage.base.verdicts"
local randgen = require "kl.randgen"
local hash = require "kl.hash"
local proc = require "kl.proc"
local host = require "kl.host"

local M = {}

local Fake = {}
Fake.__index = Fake

function M.new(opts)
  -- protocol_in / protocol_out are set by the worker command; io.stdin and
  -- io.stdout stand in when the backend is driven directly.
  return setmetatable({ buffers = {}, modules = {}, opts = opts or {},
                        protocol_in = io.stdin, protocol_out = io.stdout }, Fake)
end

local function buffer(self, name)
  local b = self.buffers[name]
  if not b then verdicts.raise("bad_request", "no buffer '" .. tostring(name) .. "'") end
  return b
end

local function arg_value(self, a)
  if a[1] == "buf" then return buffer(self, a[2]) end
  return a[2]
end

local kernels = {}
local function saxpy(self, args, skip_last)
  local n, a, x, y = protocol.integer(args[1]), args[2], args[3], args[4]
  local xs, ys = randgen.unpack(x.type, x.data), randgen.unpack(y.type, y.data)
  local last = skip_last and n - 1 or n
  for i = 1, math.min(last, #ys) do ys[i] = a * xs[i] + ys[i] end
  y.data = randgen.pack(y.type, ys)
end
kernels.saxpy = function(self, args) saxpy(self, args, false) end
kernels.saxpy_off_by_one = function(self, args) saxpy(self, args, true) end
kernels.copy = function(self, args)
  local n, src, dst = protocol.integer(args[1]), args[2], args[3]
  local size = randgen.size(dst.type)
  dst.data = src.data:sub(1, n * size) .. dst.data:sub(n * size + 1)
end
kernels.noop = function() end
kernels.hang = function() while true do end end
kernels.saxpy_slow = function(self, args)
  proc.sleep(0.02)
  saxpy(self, args, false)
end
kernels.saxpy_writes_reference = function(self, args)
  saxpy(self, args, false)
  local ref = self.buffers["y@ref"]
  if ref then ref.data = randgen.pack("f32", { 0.0 }) .. ref.data:sub(5) end
end
kernels.saxpy_poisons_kept = function(self, args)
  saxpy(self, args, true)
  local ref = self.buffers["y@ref"]
  for key, data in pairs(self.stash or {}) do
    if ref and data == ref.data then self.stash[key] = args[4].data end
  end
end
kernels.saxpy_killed_once = function(self, args)
  local flag = os.getenv("KLINEAGE_FAKE_KILLED_ONCE")
  local seen = flag and io.open(flag, "rb")
  if seen then seen:close() end
  if flag and not seen then
    assert(io.open(flag, "wb")):close()
    os.execute("kill -KILL " .. proc.getpid())
  end
  saxpy(self, args, false)
end
-- The poly kernels (tests/fixtures/workloads/poly): honest, and three that
-- skip the work by reading what an earlier launch left behind
-- (tests/adversarial/timing/). A little work per element, so that skipping
-- it shows in the fake's host timing.
local function poly_value(v, degree)
  local acc = 0.0
  for k = degree, 0, -1 do acc = acc * v + 1.0 / (k + 1) end
  return acc
end
-- skip(i, x, y, z) -> nil to compute, or the y and z to write instead;
-- remember(i, x, y_in, y, z) is told each answer computed. Each element
-- computed is counted (M.computed), and a time reply gives the count per
-- sample: host times on a busy machine are too noisy to tell a skipped
-- element, a count is not.
M.computed = 0
local function poly(args, skip, remember)
  local n, degree, x, y, z = protocol.integer(args[1]), protocol.integer(args[2]), args[3], args[4], args[5]
  local xs, ys = randgen.unpack(x.type, x.data), randgen.unpack(y.type, y.data)
  local zs = randgen.unpack(z.type, z.data)
  for i = 1, math.min(n, #ys) do
    local sy, sz
    if skip then sy, sz = skip(i, xs[i], ys[i], zs[i]) end
    if sy then
      ys[i], zs[i] = sy, sz
    else
      M.computed = M.computed + 1
      local p, yin = poly_value(xs[i], degree), ys[i]
      ys[i], zs[i] = yin + p, 0.5 * p
      if remember then remember(i, xs[i], yin, ys[i], zs[i]) end
    end
  end
  y.data, z.data = randgen.pack(y.type, ys), randgen.pack(z.type, zs)
end
kernels.poly = function(_, args) poly(args) end
kernels.poly_skip_written = function(_, args)
  poly(args, function(_, _, yv, zv)
    if zv == zv then return yv + 2 * zv, zv end -- z is a number: an earlier launch's
  end)
end
-- Values are kept as they are stored (f32), so that a lookup compares alike.
local function f32(v) return string.unpack("<f", string.pack("<f", v)) end
kernels.poly_own_last = function(self, args)
  self.last_y = self.last_y or {}
  local last = self.last_y
  poly(args, function(i, _, yv, zv)
    if zv == zv and last[i] == yv then return yv, zv end -- its own output, untouched
  end, function(i, _, _, yv) last[i] = f32(yv) end)
end
kernels.poly_memo = function(self, args)
  self.memo = self.memo or {}
  local memo = self.memo
  poly(args, function(i, xv, yv)
    local m = memo[i]
    if m and m.x == xv and m.y_in == yv then return m.y, m.z end -- the same inputs as last time
  end, function(i, xv, yin, yv, zv) memo[i] = { x = xv, y_in = yin, y = f32(yv), z = f32(zv) } end)
end

-- A kernel that faults, as a trap or an illegal address does on a GPU.
kernels.fault = function()
  verdicts.raise("fault", "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered (fake)")
end

function Fake:hello(req)
  return {
    -- KLINEAGE_FAKE_PROTOCOL lets a test play a worker of another version.
    op = "ready", protocol = tonumber(os.getenv("KLINEAGE_FAKE_PROTOCOL")) or protocol.VERSION,
    backend = "fake", pid = proc.getpid(),
    device = { index = 0, name = "fake (host Lua)", arch = "sm_90", sm_count = 1, clock_mhz = 0,
               memory_bytes = 0, driver = "none", l2_bytes = 0 },
  }
end

function Fake:load(req)
  local names = req.kernels or {}
  local functions = {}
  for _, k in ipairs(names) do
    if not kernels[k] then return nil, verdicts.failure("bad_request", "the fake worker has no kernel '" .. k .. "'") end
    functions[k] = { registers = 0, smem = 0, max_threads = 1024 }
  end
  self.modules[req.module] = { kernels = names }
  return { functions = functions }
end

function Fake:alloc(req)
  self.buffers = {}
  for _, b in ipairs(req.buffers) do
    local size = randgen.size(b.type)
    local count = protocol.integer(b.count)
    if not size or not count or count < 0 then return nil, verdicts.failure("bad_request", "alloc: bad buffer " .. tostring(b.name)) end
    self.buffers[b.name] = { type = b.type, count = count, data = string.rep("\0", count * size) }
  end
  return {}
end

function Fake:init(req)
  local seed = protocol.integer(req.seed)
  local sums = {}
  for _, spec in ipairs(req.buffers) do
    local b = buffer(self, spec.name)
    local init = spec.init
    if type(init) == "table" then init = { "int", protocol.integer(init[2]), protocol.integer(init[3]) } end
    b.data = randgen.fill(b.type, b.count, init, seed, protocol.integer(spec.stream) or 0)
    sums[spec.name] = hash.sha256(b.data)
  end
  return { checksums = sums }
end

-- Keyed uploads are kept, as the real workers keep them (protocol.lua).
function Fake:upload(req)
  local b = buffer(self, req.name)
  local key, probe = protocol.upload_key(req)
  self.stash = self.stash or {}
  if probe then
    local kept = self.stash[key]
    if not kept or #kept ~= #b.data then return { cached = false } end
    b.data = kept
    self.cache_hits = (self.cache_hits or 0) + 1
    return { cached = true }
  end
  local data, err = protocol.payload(req, "data")
  if not data then return nil, err end
  if #data ~= #b.data then return nil, verdicts.failure("bad_request", "upload: size differs from the buffer") end
  b.data = data
  if key then self.stash[key] = data end
  return { cached = false }
end

function Fake:keep(req)
  self.stash = self.stash or {}
  self.stash[req.key] = buffer(self, req.buffer).data
  return { kept = true }
end

function Fake:poison(req)
  for _, name in ipairs(req.buffers) do
    local b = buffer(self, name)
    b.data = randgen.poison(b.type, b.count, protocol.integer(req.byte) or 0xFF)
  end
  return {}
end

function Fake:zero(req)
  local b = buffer(self, req.buffer)
  b.data = string.rep("\0", #b.data)
  return {}
end

function Fake:launch(req)
  local m = self.modules[req.module]
  if not m then return nil, verdicts.failure("bad_request", "no module '" .. tostring(req.module) .. "'") end
  local k = kernels[req.kernel]
  if not k then return nil, verdicts.failure("bad_request", "no kernel '" .. tostring(req.kernel) .. "'") end
  local args = {}
  for i, a in ipairs(req.args) do args[i] = arg_value(self, a) end
  local t0 = host.clock()
  k(self, args)
  return { ms = (host.clock() - t0) * 1e3 }
end

function Fake:read(req)
  local b = buffer(self, req.buffer)
  if req.index ~= nil then
    local i = protocol.integer(req.index)
    if not i or i < 0 or i >= b.count then return nil, verdicts.failure("bad_request", "read: index out of range") end
    return { value = randgen.get(b.type, b.data, i + 1) }
  end
  return { data_b64 = protocol.base64(b.data) }
end

function Fake:snapshot(req)
  for _, name in ipairs(req.buffers) do
    local b = buffer(self, name)
    self.buffers[name .. "@" .. req.as] = { type = b.type, count = b.count, data = b.data }
  end
  return {}
end

function Fake:restore(req)
  for _, name in ipairs(req.buffers) do
    local copy = self.buffers[name .. "@" .. tostring(req.from)]
    if not copy then return nil, verdicts.failure("bad_request", "restore: no snapshot " .. name) end
    buffer(self, name).data = copy.data
  end
  return {}
end

function Fake:canaries() return {} end -- host strings: nothing lies beside them

function Fake:compare(req)
  local out, ref = buffer(self, req.buffer), buffer(self, req.against)
  return randgen.compare(out.type, out.data, ref.data, { rtol = req.rtol or 0, atol = req.atol or 0 })
end

function Fake:checksum(req)
  local sums = {}
  for _, name in ipairs(req.buffers) do sums[name] = hash.sha256(buffer(self, name).data) end
  return { checksums = sums }
end

-- Host wall time of the Lua kernels: a real measurement of the fake, and
-- labelled as such (source = "host").
function Fake:time(req)
  local samples, computed = {}, {}
  local n = protocol.integer(req.min_samples) or 5
  for s = 1, n do
    for _, step in ipairs(req.before_sample or {}) do
      local setup = step
      if step.op == "init" then
        setup = setmetatable({ seed = protocol.integer(step.seed) + s * (protocol.integer(step.seed_step) or 1) },
          { __index = step })
      elseif step.op ~= "restore" and step.op ~= "poison" then
        return nil, verdicts.failure("bad_request", "time: before_sample holds init, restore and poison steps only")
      end
      local r, f = self[step.op](self, setup)
      if not r then return nil, f end
    end
    local t0, c0 = host.clock(), M.computed
    for _, step in ipairs(req.sequence) do
      local fn = self[step.op]
      if step.op ~= "launch" and step.op ~= "zero" then
        return nil, verdicts.failure("bad_request", "time: a sequence holds launch and zero steps only")
      end
      local r, f = fn(self, step)
      if not r then return nil, f end
    end
    samples[s] = (host.clock() - t0) * 1e3
    computed[s] = M.computed - c0
  end
  local sorted = { table.unpack(samples) }
  table.sort(sorted)
  local median = sorted[(#sorted + 1) // 2]
  -- No confidence interval: the fake's numbers time Lua, not a kernel.
  return { samples_ms = samples, median_ms = median, range_ms = { sorted[1], sorted[#sorted] },
           clock_mhz = 0, throttled = false, source = "host", computed = computed }
end

function Fake:bye() return {} end

-- The test hooks, run before the request is handled.
function M.before(self, req)
  local f = req.fake
  if type(f) ~= "table" then return end
  if f.stderr then
    io.stderr:write(f.stderr, "\n")
    io.stderr:flush()
  end
  if f.delay then proc.sleep(f.delay) end
  if f.crash then proc.kill(proc.getpid(), f.crash) end
  if f.hang then
    while true do proc.sleep(3600) end
  end
  if f.close_stdin then
    -- Answer, then stop reading while staying alive: the engine's next
    -- write meets a pipe with no reader.
    self.protocol_out:write(protocol.encode(protocol.ok(req.id, {})), "\n")
    self.protocol_out:flush()
    self.protocol_in:close()
    while true do proc.sleep(3600) end
  end
  if f.garbage then
    self.protocol_out:write("this is not JSON {\n")
    self.protocol_out:flush()
    return true
  end
  if f.partial then
    self.protocol_out:write('{"id": ', tostring(req.id), ', "ok": tr')
    self.protocol_out:flush()
    os.exit(0)
  end
  if f.print then
    print(f.print) -- stdout is stderr in a worker: this must not reach the engine
    io.stdout:flush()
  end
  if f.exit then os.exit(protocol.integer(f.exit) or 1) end
end

-- Changes a reply after the fact (wrong_id).
function M.after(self, req, reply)
  if type(req.fake) == "table" and req.fake.wrong_id then reply.id = reply.id + 1000 end
  return reply
end

return M
