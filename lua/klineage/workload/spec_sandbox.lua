-- The sandbox that workload spec code runs in. Specs come from strangers,
-- so their code gets a restricted environment and a budget of instructions
-- and memory: when the file runs, and again whenever the engine calls one
-- of its functions later (an init, a run). klineage.workload is its only
-- user; it turns what comes back into failures that name the spec.
--
--   sandbox.new([what]) -> sb      one spec's environment and metatables;
--       what names the code in the watchdog's line ("the workload spec
--       gpu/workloads/x/workload.lua"), already shown with C escapes
--   sb.env                         the spec's globals (the whitelist below)
--   sb:call(limits, fn, ...) -> true, fn's results | false, message, kind
--       runs fn within limits = { instructions = n, memory = bytes
--       [, seconds = s] [, pause_gc = true] }. seconds bounds the wall-clock
--       time of the spec's own code in the call, engine calls left out
--       (default M.SECONDS; $KLINEAGE_SANDBOX_SECONDS, when set, replaces
--       every limit's seconds). pause_gc stops the collector while the spec
--       runs, for code that builds big tables (an init): it would traverse
--       them again at every resize, for nothing to free; the cap's
--       emergency collections do its work.
--       kind is "error" (the spec raised: message is its text),
--       "instructions", "memory" or "seconds" (message: "exceeded the
--       instruction limit of N", "exceeded the memory limit of N MiB",
--       "exceeded the time limit of N s"). An error raised by engine code
--       the spec called through sandbox.engine is raised again, unchanged:
--       it is not the spec's.
--   sandbox.engine(fn [, cost]) -> a function for spec code to call (a run's
--       ctx:launch): fn runs as the engine does, outside the limits, and the
--       call is charged `cost` instructions (default M.ENGINE_COST), so that
--       a loop of engine calls ends too.
--   sandbox.plain(v, where, allow_function) -> a copy of v made of plain
--       tables | nil, message: the way spec data enters the engine. The
--       copy is read raw, so no metamethod of the spec runs outside the
--       limits; a table with a metatable, a userdata or a coroutine is
--       refused, and a function is kept where allow_function(path) says so.
--
-- The environment. Specs are data plus small functions, so they get:
--   assert error ipairs next pairs pcall rawequal rawget rawlen rawset select
--   tonumber tostring type xpcall _VERSION, getmetatable and setmetatable
--   (below), math (without random and randomseed: inputs come from the rng
--   the gate gives an init), string and table as klineage.workload.sandbox_lib
--   guards them (no string.dump), utf8, and randgen: rmat_csr, pack,
--   unpack and size of kl.randgen.
-- Left out: os, io, require, load, loadfile, dofile, debug, package,
-- collectgarbage, coroutine (a new coroutine would run without the
-- instruction hook), print and warn (stdout may be a protocol stream).
--
-- How the limits hold:
--   * instructions: a count hook (debug.sethook) on the thread that runs
--     the spec, every STEP instructions. Past the limit the hook is set to
--     fire at every instruction and raises each time it fires in the
--     spec's code, so a pcall in the spec cannot swallow it: the next
--     instruction of its caller raises.
--   * memory: kl.memcap, a cap in the state's allocator at what the state
--     held on entry plus the limit. It refuses an allocation before it
--     happens (one string.rep of a terabyte fails at once, where a check
--     of collectgarbage("count") in the hook would run after the machine
--     paged), and it costs nothing while no cap is set. A spec that keeps
--     hitting the cap under a pcall, or makes the collector run at the cap
--     more than COLLECTIONS times, is stopped by the hook.
--   * time: the hook also reads a monotonic clock, so code that is slow
--     per instruction (an __index chain 2000 tables long at every access)
--     ends at limits.seconds too ("seconds").
--   * C functions that loop without allocating or running Lua: a Lua
--     pattern can backtrack for hours on a short string, string.rep("", n)
--     loops n times, table.remove walks whatever length __len claims.
--     klineage.workload.sandbox_lib guards the ones known (a clean error, or the
--     work done in Lua under the hook). While spec code runs, the strings'
--     metatable points at the spec's string table, so ("x"):find(...) is
--     guarded too; the engine's own is put back whenever the engine runs
--     (an engine call, the end of the call).
--   * and whatever C loop is not known: kl.watchdog is armed while spec
--     code runs, GRACE seconds (at most the limit itself) past the time
--     limit. A call still in C then cannot be stopped soundly, so the
--     process ends with one line that names the code and the limit, and
--     exit code 2 (bad input).
--   * metatables: setmetatable refuses __gc (a finalizer runs whenever the
--     collector likes, outside every limit) and tables it did not make
--     (the engine's failures a spec may catch); getmetatable shows only
--     the metatables the spec set. Data that comes back to the engine goes
--     through sandbox.plain, or is read raw.
local lib = require "klineage.workload.sandbox_lib"
local memcap = require "kl.memcap"
local randgen = require "kl.randgen"
local watchdog = require "kl.watchdog"

local M = {}

M.STEP = 1000                -- instructions between two runs of the hook
M.ENGINE_COST = 10000        -- instructions charged for one engine call
M.SECONDS = 60               -- wall-clock seconds of one call, where limits has none
M.GRACE = 5                  -- seconds past the limit before the watchdog ends the process
M.COLLECTIONS = 100          -- emergency collections at the cap in one call

local real_getmetatable, real_setmetatable = getmetatable, setmetatable
local raw_metatable = debug.getmetatable
local sethook, gethook = debug.sethook, debug.gethook
local clock = require("kl.host").clock
local string_mt = raw_metatable("")
local engine_string = string_mt.__index

-- $KLINEAGE_SANDBOX_SECONDS: every call's time limit, for tests and for
-- slow machines.
local ENV_SECONDS = tonumber(os.getenv("KLINEAGE_SANDBOX_SECONDS") or "")
if ENV_SECONDS and not (ENV_SECONDS > 0 and ENV_SECONDS < 1e8) then ENV_SECONDS = nil end

-- The frame of the spec call running on each thread (coroutine).
local frames = setmetatable({}, { __mode = "k" })

-- What the hook raises once a limit is passed; the frame says which.
local TRIPPED = setmetatable({}, { __tostring = function() return "spec limit exceeded" end })

-- An error raised by engine code the spec called: boxed on its way through
-- the spec (which may catch it, but not change it) and raised again at the
-- end of the call.
local EngineError = { __newindex = function() error("an engine error cannot be changed", 2) end }
local engine_errors = setmetatable({}, { __mode = "k" })

local function mib(bytes) return string.format("%.0f MiB", bytes / (1 << 20)) end

local BASE = { "assert", "error", "ipairs", "next", "pairs", "pcall", "rawequal", "rawget", "rawlen", "rawset",
               "select", "tonumber", "tostring", "type", "xpcall", "_VERSION" }

local Sandbox = {}
Sandbox.__index = Sandbox

function M.new(what)
  local sb = setmetatable({ metatables = setmetatable({}, { __mode = "k" }), what = what or "sandboxed Lua code" }, Sandbox)
  local env = {}
  for _, k in ipairs(BASE) do env[k] = _G[k] end
  local m = {}
  for k, v in pairs(math) do m[k] = v end
  m.random, m.randomseed = nil, nil
  local u = {}
  for k, v in pairs(utf8) do u[k] = v end
  env.math, env.utf8, env.table = m, u, lib.table()
  env.string = lib.string()
  env.randgen = { rmat_csr = randgen.rmat_csr, pack = randgen.pack, unpack = randgen.unpack, size = randgen.size }
  env.setmetatable = function(t, mt)
    if type(t) ~= "table" then error("bad argument #1 to 'setmetatable' (table expected, got " .. type(t) .. ")", 2) end
    if mt ~= nil and type(mt) ~= "table" then error("bad argument #2 to 'setmetatable' (nil or table expected)", 2) end
    local current = raw_metatable(t)
    if current ~= nil and not sb.metatables[current] then
      error("setmetatable: the table has a metatable the spec did not set", 2)
    end
    if mt ~= nil then
      if rawget(mt, "__gc") ~= nil then
        error("setmetatable: a spec's metatable may not have __gc (a finalizer runs outside the spec's limits)", 2)
      end
      sb.metatables[mt] = true
    end
    return real_setmetatable(t, mt)
  end
  env.getmetatable = function(v)
    local mt = raw_metatable(v)
    if type(v) == "table" and mt ~= nil and sb.metatables[mt] then return real_getmetatable(v) end
    return nil
  end
  env._G = env
  sb.env, sb.string = env, env.string
  return sb
end

---------------------------------------------------------------- calls under the limits

-- The hook raises only in the spec's code: this file's own (the end of a
-- call, a guarded function) must run to put the engine's state back.
local HERE = debug.getinfo(1, "S").source

local function hook_for(frame)
  local function hook()
    if not frame.tripped then
      local refused, raised = memcap.refusals()
      if raised > frame.raised or refused - frame.refused > M.COLLECTIONS then
        frame.tripped = "memory"
      else
        frame.left = frame.left - M.STEP
        if frame.left < 0 then frame.tripped = "instructions"
        elseif frame.spent + clock() - frame.t0 > frame.seconds then frame.tripped = "seconds" end
      end
      if frame.tripped then sethook(hook, "", 1) end
    end
    if frame.tripped and debug.getinfo(2, "S").source ~= HERE then error(TRIPPED, 0) end
  end
  return hook
end

-- The line the watchdog leaves when the spec is stuck in C past its limit.
local function watchdog_line(frame)
  return string.format("klineage: stopped: %s ran past its time limit of %g s inside a C function that cannot be "
    .. "interrupted (KLINEAGE_SANDBOX_SECONDS changes the limit)", frame.sb.what, frame.seconds)
end

-- Spec code runs: its hook, its cap, its string table, its clock and
-- watchdog (and no collector).
local function arm(frame)
  if frame.limits.pause_gc then
    frame.collecting = collectgarbage("isrunning")
    collectgarbage("stop")
  end
  frame.outer_cap = memcap.set(frame.base + frame.limits.memory)
  frame.outer_index = string_mt.__index
  string_mt.__index = frame.sb.string
  sethook(frame.hook, "", frame.tripped and 1 or M.STEP)
  frame.t0, frame.armed = clock(), true
  watchdog.arm(math.max(0, frame.seconds - frame.spent) + math.min(M.GRACE, frame.seconds), watchdog_line(frame))
end

-- The engine runs: none of them.
local function disarm(frame)
  watchdog.disarm()
  frame.spent, frame.armed = frame.spent + (clock() - frame.t0), false
  sethook()
  string_mt.__index = frame.outer_index
  memcap.set(frame.outer_cap)
  if frame.limits.pause_gc and frame.collecting then collectgarbage("restart") end
end

local function describe(e)
  if type(e) == "string" then
    if #e > 400 then e = e:sub(1, 400) .. "..." end
    return e
  end
  if math.type(e) then return tostring(e) end
  return "raised a " .. type(e) .. " value"
end

local function finish(frame, ok, ...)
  local e = ...
  if frame.tripped == "instructions" then
    return false, string.format("exceeded the instruction limit of %d", frame.limits.instructions), "instructions"
  end
  if frame.tripped == "seconds" then
    return false, string.format("exceeded the time limit of %g s", frame.seconds), "seconds"
  end
  local refused = memcap.refusals()
  if frame.tripped == "memory" or (not ok and refused > frame.refused and e == "not enough memory") then
    return false, string.format("exceeded the memory limit of %s", mib(frame.limits.memory)), "memory"
  end
  if ok then return true, ... end
  if real_getmetatable(e) == EngineError then error(engine_errors[e], 0) end
  return false, describe(e), "error"
end

function Sandbox:call(limits, fn, ...)
  local thread = coroutine.running()
  local refused, raised = memcap.refusals()
  local frame = { sb = self, limits = limits, left = limits.instructions, base = memcap.used(),
                  refused = refused, raised = raised, parent = frames[thread],
                  seconds = ENV_SECONDS or limits.seconds or M.SECONDS, spent = 0 }
  frame.hook = hook_for(frame)
  local prev_hook, prev_mask, prev_count = gethook()
  frames[thread] = frame
  arm(frame)
  local function done(...)
    disarm(frame)
    frames[thread] = frame.parent
    if type(prev_hook) == "function" then sethook(prev_hook, prev_mask, prev_count) end
    -- a call made while another spec call runs (no engine call between):
    -- the outer one is watched again
    local outer = frame.parent
    if outer and outer.armed then
      watchdog.arm(math.max(0, outer.seconds - outer.spent - (clock() - outer.t0)) + math.min(M.GRACE, outer.seconds),
        watchdog_line(outer))
    end
    return finish(frame, ...)
  end
  return done(pcall(fn, ...))
end

local function engine_handler(e)
  if type(e) ~= "string" then return e end
  return debug.traceback(e, 2)
end

local function resumed(frame, ok, ...)
  -- what others allocated meanwhile is not the spec's
  frame.base = math.max(0, memcap.used() - frame.held)
  arm(frame)
  if not ok then
    local box = real_setmetatable({}, EngineError)
    engine_errors[box] = ...
    error(box, 0)
  end
  return ...
end

function M.engine(fn, cost)
  cost = cost or M.ENGINE_COST
  return function(...)
    local frame = frames[coroutine.running()]
    if not frame then return fn(...) end
    if not frame.tripped then
      frame.left = frame.left - cost
      if frame.left < 0 then
        frame.tripped = "instructions"
        sethook(frame.hook, "", 1)
      end
    end
    if frame.tripped then error(TRIPPED, 0) end
    frame.held = memcap.used() - frame.base
    disarm(frame)
    return resumed(frame, xpcall(fn, engine_handler, ...))
  end
end

---------------------------------------------------------------- plain data

local function key_text(k)
  if type(k) == "string" then return k end
  return "[" .. tostring(k) .. "]"
end

function M.plain(v, where, allow_function)
  local seen = {}
  local function copy(x, path, depth)
    local t = type(x)
    if t == "string" or t == "number" or t == "boolean" or t == "nil" then return x end
    if t == "function" then
      if allow_function and allow_function(path) then return x end
      error({ path = path, msg = "a function is not allowed here" }, 0)
    end
    if t ~= "table" then error({ path = path, msg = "a " .. t .. " is not spec data" }, 0) end
    if raw_metatable(x) ~= nil then error({ path = path, msg = "a table with a metatable (a spec is plain data)" }, 0) end
    if seen[x] then return seen[x] end
    if depth > 16 then error({ path = path, msg = "nested more than 16 tables deep" }, 0) end
    local out = {}
    seen[x] = out
    local k, val = next(x)
    while k ~= nil do
      local kt = type(k)
      if kt ~= "string" and kt ~= "number" and kt ~= "boolean" then
        error({ path = path, msg = "a key of type " .. kt .. " (keys are names and numbers)" }, 0)
      end
      local sub = path == "" and key_text(k) or (type(k) == "string" and path .. "." .. k or path .. key_text(k))
      rawset(out, k, copy(val, sub, depth + 1))
      k, val = next(x, k)
    end
    return out
  end
  local ok, r = pcall(copy, v, "", 0)
  if ok then return r end
  if type(r) == "table" and r.msg then
    return nil, string.format("%s: %s", r.path == "" and where or r.path, r.msg)
  end
  error(r, 0)
end

return M
