-- The emu worker backend: answers the worker protocol
-- (worker/protocol.lua) by running kernels on the CPU through kl.emu, so
-- the gate's correctness stage works unchanged where there is no GPU.
--
-- The worker command loads a backend as klineage.device.worker.backend_<name>;
-- worker/backend_emu.lua is `return require "klineage.device.emu_worker"`.
--
-- The sandbox. Kernels on emu are host code, so `klineage worker --backend
-- emu` confines itself (M.sandbox, called by commands/worker.lua before it
-- serves, so before any kernel is loaded) with kl.sandbox's seccomp filter
-- (engine/core/sandbox.h). Forbidden, the worker dying by SIGSYS after a
-- line on stderr that names the call ("klineage sandbox: ..."): running a
-- program, starting a process (fork, system, popen: these two block every
-- signal first, so the line is missing and the start-up note is the last
-- line instead), sockets, opening a file for writing, changing the file
-- system, touching another process (ptrace, kill of another pid), a
-- SIGKILL/SIGTERM/SIGINT/SIGHUP to itself (which would read as the engine's
-- fault, worker_lost), asking the kernel to signal a process (fcntl
-- F_SETOWN, F_SETSIG, O_ASYNC, leases, notify), mount, modules, bpf,
-- io_uring, poisoning pages and the like (engine/core/SANDBOX.md reviews
-- every allowed call). The worker starts without secrets in its
-- environment (worker/clean_env.lua). The
-- gate records that as the verdict `fault` (blame candidate), the pool
-- restarts the worker and judging goes on. Not forbidden: reading any file
-- this user may read, writing to the worker's own pipes (stdout is the
-- protocol: a kernel that writes there breaks it and is a fault), using
-- memory and threads; the sandbox protects the machine, not the verdict (a
-- kernel runs inside the judge and could, with deliberate effort, forge its
-- replies). Every other call fails with ENOSYS. KLINEAGE_EMU_SANDBOX=off
-- runs unconfined, with a warning on stderr (debugging only); a machine
-- without seccomp fails the worker's start-up instead.
--
-- Differences from the cuda backend, all by design:
--   load     takes `library`, the shared object emu.build compiled in the
--            engine, and `source` (the CUDA C text, lowered again here for
--            the kernel table); an unsandboxed worker (tests, in-process)
--            may be given `source` alone and compiles it itself, answering
--            "unsupported" for constructs the emulator cannot run or that
--            the host compiler rejects, with the construct and line
--   init     fills on the host with engine/core/randgen.h's algorithm: the
--            same bytes as the device generator for the same seed
--   launch   runs on the CPU; `ms` is host wall time, not GPU time. A fault,
--            a divergent barrier or a hang (request `timeout`, seconds)
--            answers verdict "fault" with the emulator's message; printf
--            output goes to stderr, never into the protocol stream
--   time, metrics  answer "unsupported": no timing on emu
--   host_reference (emu only) calls a workload's compiled C reference on the
--            worker's buffers, through kl.emu's load_host; the engine
--            compiled it, the worker only opens it
local emu = require "klineage.device.emu"
local protocol = require "klineage.device.worker.protocol"
local resident = require "klineage.device.worker.resident"
local verdicts = require "klineage.base.verdicts"
local randgen = require "kl.randgen"
local host = require "kl.host"
local kemu = require "kl.emu"

local M = {}

local Worker = {}
Worker.__index = Worker

local function bad(message) verdicts.raise("bad_request", message) end

-- Modules kept loaded at once: each is a mapped shared object
-- (worker/resident.lua says why there is a bound).
M.RESIDENT_MODULES = 16

function M.new(opts)
  opts = opts or {}
  return setmetatable({ opts = opts, modules = resident.new(opts.resident or M.RESIDENT_MODULES, function(m) m:close() end),
                        buffers = {} }, Worker)
end

function Worker:buffer(name)
  local b = self.buffers[name]
  if not b then bad("no buffer '" .. tostring(name) .. "'") end
  return b
end

function Worker:hello()
  local ok, pid = pcall(function() return require("kl.proc").getpid() end)
  return {
    op = "ready", protocol = protocol.VERSION, backend = "emu", pid = ok and pid or nil,
    sandbox = self.sandboxed and "seccomp" or "off",
    device = { index = 0, name = string.format("kl.emu on %d host threads", host.cpu_count()),
               arch = "emu", sm_count = host.cpu_count(), clock_mhz = 0, memory_bytes = 0,
               driver = "kl.emu abi " .. kemu.abi, l2_bytes = 0 },
  }
end

function Worker:load(req)
  if type(req.source) ~= "string" then bad("load: the emu backend needs `source`, the CUDA C text") end
  local mod = self.modules:get(req.module) -- the engine names a module by its source's hash
  if not mod then
    local v
    local name = req.name or (tostring(req.module) .. ".cu")
    if type(req.library) == "string" then
      local lowered
      lowered, v = emu.lower(req.source, name)
      if not lowered then return nil, verdicts.failure("unsupported", "emu: " .. v.message) end
      mod, v = emu.open(req.library, lowered)
      if not mod then return nil, v end
    elseif self.sandboxed then
      bad("load: a sandboxed emu worker cannot compile; send `library`, the shared object emu.build made")
    else
      mod, v = emu.compile(req.source, { name = name })
      if not mod then
        -- A construct the emulator lacks, or one the host compiler rejects
        -- after NVRTC accepted it: either way, this kernel cannot run here.
        if v.verdict == "io_error" then return nil, v end
        return nil, verdicts.failure("unsupported", "emu: " .. v.message)
      end
    end
  end
  local functions = {}
  for _, name in ipairs(req.kernels or {}) do
    local sig, err = mod:signature(name)
    if not sig then return nil, verdicts.failure("bad_request", "load: " .. err) end
    functions[name] = { registers = 0, smem = 0, max_threads = 1024, local_bytes = 0, params = sig }
  end
  self.modules:put(req.module, mod)
  return { functions = functions }
end

function Worker:alloc(req)
  for _, b in pairs(self.buffers) do b.mem:free() end
  self.buffers = {}
  for _, spec in ipairs(req.buffers or {}) do
    local size = randgen.size(spec.type)
    local count = protocol.integer(spec.count)
    if not size or not count or count < 0 then bad("alloc: bad buffer " .. tostring(spec.name)) end
    self.buffers[spec.name] = { mem = emu.alloc(count * size, spec.name, size), type = spec.type,
                                count = count, size = count * size }
  end
  return {}
end

function Worker:checksum(req)
  local sums = {}
  for _, name in ipairs(req.buffers or {}) do sums[name] = self:buffer(name).mem:sha256() end
  return { checksums = sums }
end

function Worker:init(req)
  local seed = protocol.integer(req.seed)
  if not seed then bad("init: seed must be an integer") end
  local names = {}
  for i, spec in ipairs(req.buffers or {}) do
    local b = self:buffer(spec.name)
    -- JSON has one number type: { "int", lo, hi } comes back with float
    -- bounds, which kl.randgen refuses (the other workers convert them too).
    local init = spec.init
    if type(init) == "table" then init = { init[1], protocol.integer(init[2]), protocol.integer(init[3]) } end
    -- in place: no copy of a buffer of tens of MB through a Lua string
    local ok, err = pcall(b.mem.generate, b.mem, b.type, init, seed, protocol.integer(spec.stream) or 0)
    if not ok then bad("init " .. spec.name .. ": " .. tostring(err)) end
    names[i] = spec.name
  end
  return self:checksum({ buffers = names })
end

-- Keyed bytes (an upload with a key, a kept buffer: protocol.lua, "upload"
-- and "keep") are kept; the emulator's buffers are small, so the last 64 are.
local STASH_MAX = 64
function Worker:stash_put(key, data)
  self.stash, self.stash_order = self.stash or {}, self.stash_order or {}
  if not self.stash[key] then self.stash_order[#self.stash_order + 1] = key end
  self.stash[key] = data
  if #self.stash_order > STASH_MAX then self.stash[table.remove(self.stash_order, 1)] = nil end
end

function Worker:upload(req)
  local b = self:buffer(req.name)
  local key, probe = protocol.upload_key(req)
  if probe then
    local kept = (self.stash or {})[key]
    if not kept or #kept ~= b.size then return { cached = false } end
    b.mem:upload(kept)
    return { cached = true }
  end
  local data, err = protocol.payload(req, "data")
  if not data then bad("upload: " .. err.message) end
  if #data ~= b.size then bad(string.format("upload: %d bytes for a buffer of %d", #data, b.size)) end
  b.mem:upload(data)
  if key then self:stash_put(key, data) end
  return { cached = false }
end

function Worker:keep(req)
  self:stash_put(req.key, self:buffer(req.buffer).mem:download())
  return { kept = true }
end

function Worker:poison(req)
  for _, name in ipairs(req.buffers or {}) do self:buffer(name).mem:fill(protocol.integer(req.byte) or 0xFF) end
  return {}
end

function Worker:zero(req)
  self:buffer(req.buffer).mem:fill(0)
  return {}
end

function Worker:launch(req)
  local mod = self.modules:get(req.module)
  if not mod then bad("no module '" .. tostring(req.module) .. "'") end
  local args = {}
  for i, a in ipairs(req.args or {}) do
    if type(a) ~= "table" then bad("launch: argument " .. i .. " is not a pair") end
    if a[1] == "buf" then args[i] = self:buffer(a[2]).mem else args[i] = a[2] end
  end
  local t0 = host.clock()
  local ok, info = mod:launch(req.kernel, {
    grid = req.grid, block = req.block, smem = protocol.integer(req.smem) or 0, args = args,
    order = req.order, seed = protocol.integer(req.order_seed), capture = true,
    timeout = req.timeout,
  })
  local ms = (host.clock() - t0) * 1e3
  if info and info.output and #info.output > 0 then io.stderr:write(info.output) end -- a failure keeps it too
  if ok then return { ms = ms, source = "host" } end
  return nil, info
end

-- The C reference (protocol.lua, "host_reference"): opened for this one
-- call and closed again, so a cache entry is never held open; the buffers
-- are lent to it for the call.
function Worker:host_reference(req)
  if type(req.so_path) ~= "string" then bad("host_reference: so_path must be a path") end
  local args = {}
  for i, a in ipairs(req.args) do
    if a[1] == "buf" then args[i] = self:buffer(a[2]).mem else args[i] = { a[1], a[2] } end
  end
  local loadable, lf = emu.loadable(req.so_path)
  if not loadable then return nil, lf end
  local lib <close>, err = kemu.load_host(req.so_path)
  if not lib then bad("host_reference: " .. err) end
  local t0 = host.clock()
  local ok, cerr = pcall(lib.call, lib, "kl_reference_entry", args)
  if not ok then bad("host_reference: " .. tostring(cerr)) end
  return { ms = (host.clock() - t0) * 1e3, source = "host" }
end

function Worker:read(req)
  local b = self:buffer(req.buffer)
  if req.index ~= nil then
    local i = protocol.integer(req.index)
    if not i or i < 0 or i >= b.count then bad("read: index out of range") end
    local size = randgen.size(b.type)
    return { value = randgen.get(b.type, b.mem:download(i * size, size), 1) }
  end
  return { data_b64 = protocol.base64(b.mem:download()) }
end

function Worker:snapshot(req)
  for _, name in ipairs(req.buffers or {}) do
    local b = self:buffer(name)
    local key = name .. "@" .. tostring(req.as)
    if self.buffers[key] then self.buffers[key].mem:free() end
    local copy = emu.alloc(b.size, key, randgen.size(b.type))
    copy:copy_from(b.mem)
    self.buffers[key] = { mem = copy, type = b.type, count = b.count, size = b.size }
  end
  return {}
end

function Worker:restore(req)
  for _, name in ipairs(req.buffers or {}) do
    local copy = self.buffers[name .. "@" .. tostring(req.from)]
    if not copy then bad("restore: no snapshot " .. name .. "@" .. tostring(req.from)) end
    self:buffer(name).mem:copy_from(copy.mem)
  end
  return {}
end

-- Guard pages around every buffer fault at once (emu.lua): nothing is left
-- to check after the launch.
function Worker:canaries() return {} end

function Worker:compare(req)
  local out, ref = self:buffer(req.buffer), self:buffer(req.against)
  if out.type ~= ref.type or out.count ~= ref.count then bad("compare: buffers differ in type or size") end
  return randgen.compare(out.type, out.mem:download(), ref.mem:download(),
    { rtol = req.rtol or 0, atol = req.atol or 0 })
end

function Worker:time()
  return nil, verdicts.failure("unsupported", "no timing on emu")
end

function Worker:metrics()
  return nil, verdicts.failure("unsupported", "no metrics on emu")
end

-- The worker command's start-up hook (commands/worker.lua): confines this
-- process for good, keeping only the protocol streams open. true | nil, err.
M.SANDBOX_NOTE = "klineage sandbox: on (seccomp); a death by SIGSYS is the sandbox stopping a forbidden system call\n"

function M.sandbox(worker, streams)
  if os.getenv("KLINEAGE_EMU_SANDBOX") == "off" then
    io.stderr:write("klineage worker: the emu sandbox is off (KLINEAGE_EMU_SANDBOX=off): kernels run with every right of this user\n")
    return true
  end
  local ok, err = require("kl.sandbox").enter { keep = streams }
  if not ok then return nil, err .. " (KLINEAGE_EMU_SANDBOX=off runs kernels unconfined)" end
  worker.sandboxed = true
  io.stderr:write(M.SANDBOX_NOTE)
  return true
end

function Worker:bye()
  for _, b in pairs(self.buffers) do b.mem:free() end
  self.buffers = {}
  return {}
end

return M
