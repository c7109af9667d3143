-- The worker pool: one `klineage worker` child per visible device, started
-- lazily, restarted when it dies, and the place where a worker's death or
-- silence becomes a verdict.
--
--   local pool = require("klineage.device.worker.pool").new{
--     backend = "cuda" | "emu" | "fake",
--     devices = { "0", "1" },   -- default: visible_devices(backend)
--     timeout = 60,             -- seconds a request may take (per-request override)
--     start_timeout = 60,       -- seconds for a new worker to answer hello
--     argv = { ... },           -- default: { <klineage>, "worker", "--backend", backend }
--     env = { NAME = value },   -- added to each worker's environment; secret names never
--                               -- are, and the engine's own are removed (clean_env.lua)
--   }
--   pool:size()
--   pool:request(i, req [, timeout]) -> reply | nil, failure
--   pool:submit(i, req [, timeout]) -> ticket ; pool:collect(ticket) -> as request
--       submit to several workers, then collect: they run in parallel.
--   pool:wait_any(tickets) -> k: tickets[k] can be collected without
--       waiting (its reply is in, its worker died, or its time is up).
--   pool:device(i)   -> the device table of worker i's hello (starts it)
--   pool:stats(i)    -> { starts, deaths, timeouts }
--   pool:close()     -> says bye to every worker, kills the ones that linger
--
-- A failed request is nil, failure (klineage.base.verdicts): failure.verdict is
--   "fault"        the worker died of its own (failure.signal or .code,
--                  failure.stderr: the tail of its stderr), or replied
--                  verdict "fault" (the message carries the driver's), or
--                  broke the protocol (garbage, a wrong id: it is killed,
--                  failure.protocol);
--   "worker_lost"  the worker was killed from outside (SIGKILL, SIGTERM,
--                  SIGINT, SIGHUP that the pool did not send: the OOM killer,
--                  a person): not the kernel's doing;
--   "timeout"      no reply within the timeout: the worker is killed;
--   "worker_unavailable"  the worker could not be started or did not
--                  answer its hello;
--   any verdict a worker replied with ("unsupported", "bad_request", ...),
--                  with failure.reply.
-- After any death the next request starts a fresh worker; pool:generation(i)
-- changes then, so that a caller knows its loaded modules are gone.
-- failure.message is always a one-line summary.
local proc = require "kl.proc"
local host = require "kl.host"
local protocol = require "klineage.device.worker.protocol"
local verdicts = require "klineage.base.verdicts"

local M = {}

local STDERR_TAIL = 2000

local Pool = {}
Pool.__index = Pool

-- The driver's device count, asked without creating a context (cuInit
-- only; a worker is fork+exec'd, so the parent's driver state never leaks
-- into it). nil where there is no driver.
local function driver_device_count()
  local ok, cuda = pcall(require, "kl.cuda")
  if not ok or not cuda.load() then return nil end
  local dok, devices = pcall(cuda.devices)
  return dok and #devices or nil
end

-- The device list of a backend: for cuda, the entries of
-- CUDA_VISIBLE_DEVICES (set but empty: none), or when it is unset every
-- device the driver counts (one, "0", when it cannot say); one worker for
-- any other backend. value stands in for the environment variable (false:
-- unset), count for the driver's device count (tests).
function M.visible_devices(backend, value, count)
  if backend ~= "cuda" then return { "" } end
  local v = value
  if v == nil then v = os.getenv("CUDA_VISIBLE_DEVICES") end
  local out = {}
  if not v then
    local n = (count or driver_device_count)() or 1
    for i = 0, n - 1 do out[#out + 1] = tostring(i) end
    return out
  end
  for d in v:gmatch("[^,%s]+") do out[#out + 1] = d end
  return out
end

function M.new(opts)
  opts = opts or {}
  local backend = opts.backend or "fake"
  local devices = opts.devices or M.visible_devices(backend)
  if #devices == 0 then return nil, verdicts.failure("worker_unavailable", "no visible device (CUDA_VISIBLE_DEVICES is empty)") end
  local self = setmetatable({
    backend = backend,
    timeout = opts.timeout or 60,
    start_timeout = opts.start_timeout or 60,
    argv = opts.argv or { host.executable(), "worker", "--backend", backend },
    env = opts.env or {},
    workers = {},
  }, Pool)
  for i, d in ipairs(devices) do
    self.workers[i] = { device_id = d, next_id = 1, stats = { starts = 0, deaths = 0, timeouts = 0 },
                        dead = setmetatable({}, { __mode = "k" }) }
  end
  return self
end

function Pool:size() return #self.workers end

local function tail(text)
  if #text > STDERR_TAIL then text = "..." .. text:sub(-STDERR_TAIL) end
  return text
end

-- Ends worker w's process (already dead or not) and describes how it ended.
-- kill: at once (it hangs or broke the protocol); otherwise it gets grace
-- seconds to finish dying on its own, so its real signal or code is seen.
local function bury(w, kill, grace)
  local p = w.proc
  w.proc, w.device = nil, nil
  if not p then return {} end
  if kill then p:kill("KILL") end
  local status = p:wait(kill and 10 or grace or 2)
  if not status then
    kill = true
    p:kill("KILL")
    status = p:wait(10) or {}
  end
  local info = { signal = status.signal, code = status.code, stderr = tail(p:stderr()), killed = kill or nil }
  p:close()
  w.stats.deaths = w.stats.deaths + 1
  w.dead[p] = info -- for tickets still out on this process
  return info
end

local function death_message(what, info)
  local how
  if info.signal then how = "killed by " .. info.signal
  elseif info.code then how = "exited with code " .. info.code
  else how = "died" end
  local last = info.stderr and info.stderr:match("([^\n]+)\n*$")
  return string.format("worker %s %s%s", how, what, last and (": " .. last) or "")
end

local function failure(verdict, info)
  return nil, verdicts.failure(verdict, info.message, info)
end

-- Signals that come from outside a process, never from its own faults: a
-- worker that dies of one that the pool did not send was lost, not broken.
local OUTSIDE = { SIGKILL = true, SIGTERM = true, SIGINT = true, SIGHUP = true }

-- The verdict for a worker that died of its own accord (not killed by us).
local function death_verdict(info)
  return (OUTSIDE[info.signal] and not info.killed) and "worker_lost" or "fault"
end

-- Sends one line and reads one reply, mapping every way it can go wrong.
local function exchange(self, w, req, timeout)
  local p = w.proc
  local id = w.next_id
  w.next_id = id + 1
  req.id = id
  local deadline = host.clock() + timeout
  local ok, werr = p:write(protocol.encode(req) .. "\n", timeout)
  if not ok then
    if werr == "timeout" then
      local info = bury(w, true)
      w.stats.timeouts = w.stats.timeouts + 1
      info.message = string.format("worker did not read the '%s' request within %g s", req.op, timeout)
      return failure("timeout", info)
    end
    local info = bury(w, false, 0.5)
    info.message = death_message("before reading '" .. req.op .. "'", info)
    return failure(death_verdict(info), info)
  end
  return { w = w, proc = p, id = id, op = req.op, deadline = deadline, timeout = timeout }
end

local function receive(self, t)
  local w = t.w
  local p = w.proc
  -- A ticket belongs to the process it was sent to: once that one is
  -- buried (another request found it dead), this reply can never come.
  if not p or p ~= t.proc then
    local info = {}
    for k, v in pairs(w.dead[t.proc] or {}) do info[k] = v end
    info.message = death_message("before its reply to '" .. t.op .. "'", info)
    return failure(death_verdict(info), info)
  end
  local line, rerr = p:read_line(math.max(0, t.deadline - host.clock()))
  if not line then
    if rerr == "timeout" then
      local info = bury(w, true)
      w.stats.timeouts = w.stats.timeouts + 1
      info.message = string.format("no reply to '%s' within %g s: worker killed", t.op, t.timeout)
      return failure("timeout", info)
    end
    local killed = rerr ~= "eof"
    local info = bury(w, killed)
    info.message = death_message("during '" .. t.op .. "'", info)
    return failure(killed and "fault" or death_verdict(info), info)
  end
  local reply, df = protocol.decode(line)
  local derr = df and df.message
  if reply and protocol.integer(reply.id) ~= t.id then
    derr = string.format("reply id %s to request %d", tostring(reply.id), t.id)
    reply = nil
  end
  if not reply then
    local info = bury(w, true)
    info.message = string.format("protocol violation during '%s': %s (line: %q): worker killed", t.op, derr, line:sub(1, 80))
    info.protocol = true
    return failure("fault", info)
  end
  if reply.ok == false then
    local info = { message = tostring(reply.error or "failed"), reply = reply }
    if protocol.FATAL[reply.verdict] then
      -- The worker exits after a sticky device error or a write out of
      -- bounds (its memory is no longer trusted); collect its stderr.
      local dead = bury(w, false)
      info.stderr, info.code, info.signal = dead.stderr, dead.code, dead.signal
    end
    local verdict = reply.verdict
    if not verdicts.get(verdict) then
      info.message = string.format("unregistered verdict %s from the worker: %s", tostring(verdict), info.message)
      verdict = "internal"
    end
    return failure(verdict, info)
  end
  return reply
end

-- Starts worker i when it is not running; returns true or nil, failure.
function Pool:start(i)
  local w = self.workers[i]
  if not w then error("pool: no worker " .. tostring(i), 2) end
  if w.proc and w.proc:running() then return true end
  if w.proc then bury(w, false) end
  -- no secrets: on emu the kernel is host code that can read them (clean_env.lua)
  local env = require("klineage.device.worker.clean_env").overlay(self.env)
  if self.backend == "cuda" then env.CUDA_VISIBLE_DEVICES = w.device_id end
  local p, err = proc.spawn({ argv = self.argv, env = env })
  if not p then return failure("worker_unavailable", { message = "cannot start the worker: " .. err }) end
  w.proc = p
  w.next_id = 1
  w.stats.starts = w.stats.starts + 1
  local t, f = exchange(self, w, { op = "hello", protocol = protocol.VERSION }, self.start_timeout)
  local reply
  if t then reply, f = receive(self, t) end
  if not reply then
    f.message = "worker did not start: " .. f.message
    f.verdict = "worker_unavailable"
    return nil, f
  end
  if protocol.integer(reply.protocol) ~= protocol.VERSION then
    local info = bury(w, true)
    info.message = string.format("worker speaks protocol %s, the engine %d", tostring(protocol.integer(reply.protocol) or reply.protocol), protocol.VERSION)
    info.protocol = true
    return failure("worker_unavailable", info)
  end
  w.device = reply.device
  w.hello = reply
  return true
end

function Pool:submit(i, req, timeout)
  local ok, f = self:start(i)
  if not ok then return { failed = f } end
  local t, tf = exchange(self, self.workers[i], req, timeout or self.timeout)
  if not t then return { failed = tf } end
  return t
end

function Pool:collect(t)
  if t.failed then return nil, t.failed end
  return receive(self, t)
end

function Pool:wait_any(tickets)
  local procs, at = {}, {}
  local soonest, soonest_k
  for k, t in ipairs(tickets) do
    -- a failed submit, or a worker already replaced or buried: no wait
    if t.failed or t.w.proc ~= t.proc then return k end
    procs[#procs + 1], at[#procs + 1] = t.proc, k
    if not soonest or t.deadline < soonest then soonest, soonest_k = t.deadline, k end
  end
  local i = proc.wait_line(procs, math.max(0, soonest - host.clock()))
  -- on a timeout, the ticket whose time is up: collecting it says so
  return i and at[i] or soonest_k
end

function Pool:request(i, req, timeout)
  return self:collect(self:submit(i, req, timeout))
end

function Pool:device(i)
  local ok, f = self:start(i)
  if not ok then return nil, f end
  return self.workers[i].device
end

function Pool:stats(i) return self.workers[i].stats end

-- Changes each time worker i dies or starts afresh: what it had loaded is gone.
function Pool:generation(i)
  local st = self.workers[i].stats
  return st.starts + st.deaths
end

function Pool:pid(i)
  local w = self.workers[i]
  return w.proc and w.proc.pid
end

function Pool:close()
  for _, w in ipairs(self.workers) do
    if w.proc then
      if w.proc:running() then
        local t = exchange(self, w, { op = "bye" }, 5)
        if t and w.proc then receive(self, t) end
      end
      if w.proc then
        w.proc:close_stdin()
        if not w.proc:wait(5) then w.proc:kill("KILL") end
        w.proc:close()
        w.proc = nil
      end
    end
  end
end

return M
