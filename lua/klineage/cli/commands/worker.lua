-- klineage worker: the isolated child process that owns one device and
-- answers JSON-line requests (lua/klineage/device/worker/protocol.lua) on stdin and
-- stdout. The engine starts it through the pool (worker/pool.lua); a person
-- rarely runs it by hand.
--
-- A backend is a module, klineage.device.worker.backend_<name> (fake is
-- klineage.device.worker.fake_worker), returning { new(opts) -> worker | nil, err }
-- and optionally before(worker, req) -> handled, after(worker, req, reply)
-- and sandbox(worker, { in, out }) -> true | nil, err: called once the
-- protocol streams exist and before the first request, to confine the
-- process (emu: kernels are host code, see emu_worker.lua). A backend
-- whose sandbox cannot be entered does not start (exit 1).
-- The worker has one method per protocol op: worker:op(req) -> reply fields
-- | nil, failure (klineage.base.verdicts), or it raises a failure. A missing
-- method answers "unsupported"; any other Lua error answers verdict
-- "internal" and the worker keeps serving; a "fault"
-- reply (a sticky device error) is the last: the worker exits 3 after it.
local args = require "klineage.base.args"
local exit_codes = require "klineage.base.exit_codes"
local protocol = require "klineage.device.worker.protocol"
local verdicts = require "klineage.base.verdicts"

local BACKENDS = { fake = "klineage.device.worker.fake_worker" }

local function load_backend(name)
  local names = require("klineage.device.backends").NAMES
  local known = false
  for _, n in ipairs(names) do known = known or n == name end
  if not known then return nil, string.format("unknown backend '%s' (%s)", name, table.concat(names, ", ")) end
  local module = BACKENDS[name] or ("klineage.device.worker.backend_" .. name)
  local ok, mod = pcall(require, module)
  if ok then return mod end
  if type(mod) == "string" and mod:find("module '" .. module .. "' not found", 1, true) then
    return nil, string.format("backend '%s' is not built yet (no module %s)", name, module)
  end
  error(mod, 0)
end

-- A batch (protocol.lua, "batch"): its steps in order, each as if it came
-- alone, answered together; the first failure ends it, naming its step.
local BATCHED = { zero = true, launch = true, read = true }
local function run_batch(worker, req)
  if type(req.steps) ~= "table" or #req.steps == 0 then
    return nil, verdicts.failure("bad_request", "batch: steps must be a non-empty list")
  end
  local results = {}
  for i, step in ipairs(req.steps) do
    if type(step) ~= "table" or not BATCHED[step.op] then
      return nil, verdicts.failure("bad_request", string.format("batch: step %d must be a zero, launch or read request", i))
    end
    step.id = req.id
    local ok, cerr = protocol.check_request(step)
    if not ok then return nil, verdicts.failure("bad_request", string.format("batch: step %d: %s", i, cerr.message)) end
    local fields, f = verdicts.protect(worker[step.op], worker, step)
    if not fields then
      return nil, verdicts.failure(f.verdict, string.format("batch step %d (%s%s): %s", i, step.op,
        step.kernel and " " .. tostring(step.kernel) or "", f.message))
    end
    results[i] = fields
  end
  return { results = results }
end

local function serve(backend, worker, input, output, name)
  local function send(reply)
    output:write(protocol.encode(reply), "\n")
    output:flush()
  end
  for line in input:lines() do
    local req, derr = protocol.decode(line)
    local id = req and protocol.integer(req.id) or nil
    local ok, cerr = protocol.check_request(req)
    if not req then
      send(protocol.fail(nil, "bad_request", derr.message))
    elseif not ok then
      send(protocol.fail(id, "bad_request", cerr.message))
    else
      local handled = backend.before and backend.before(worker, req)
      if not handled then
        local method = req.op == "batch" and run_batch or worker[req.op]
        local reply
        if not method then
          reply = protocol.fail(id, "unsupported", string.format("the %s backend has no '%s'", name or "worker", req.op))
        else
          local fields, f = verdicts.protect(method, worker, req)
          if fields then
            reply = protocol.ok(id, fields)
          else
            reply = protocol.fail(id, f.verdict, f.message)
          end
        end
        if backend.after then reply = backend.after(worker, req, reply) end
        send(reply)
        if req.op == "bye" then return exit_codes.of("ok") end
        if reply.ok == false and protocol.FATAL[reply.verdict] then return exit_codes.of("stopped_after_fault") end
      end
    end
  end
  return exit_codes.of("ok") -- the engine closed our stdin
end

return {
  flags = { backend = "string" },
  summary = "serve gate requests for one device over stdin/stdout (used by the engine)",
  usage = "usage: klineage worker --backend cuda|emu|fake",
  help = [[
Runs one worker: a child process that owns one device and answers the JSON
lines of lua/klineage/device/worker/protocol.lua on stdin and stdout, one reply per
request. The engine's pool starts one per visible device and restarts a
worker that dies. Logs go to stderr; stdout carries replies only.

options:
  --backend NAME   cuda (the GPU through the driver), emu (CPU execution),
                   or fake (Lua kernels, for testing the engine's handling
                   of crashes, hangs and garbage)]],
  run = function(argv)
    local a = args.parse(argv, { flags = { backend = "string" }, max = 0 })
    if not a.backend then args.usage_error("missing --backend cuda|emu|fake") end
    local backend, err = load_backend(a.backend)
    if not backend then
      io.stderr:write("klineage worker: ", err, "\n")
      return exit_codes.of("bad_input") -- an unknown backend, or one not built
    end
    local worker, werr = backend.new({ backend = a.backend })
    if not worker then
      io.stderr:write("klineage worker: ", tostring(werr), "\n")
      return exit_codes.of("worker_unavailable")
    end
    -- Replies get private copies of stdin and stdout; fd 1 becomes stderr,
    -- so kernel or driver output cannot corrupt the protocol.
    local input, output = require("kl.proc").protocol_streams()
    if not input then
      io.stderr:write("klineage worker: ", output, "\n")
      return exit_codes.of("worker_unavailable")
    end
    worker.protocol_in, worker.protocol_out = input, output
    if backend.sandbox then
      local ok, serr = backend.sandbox(worker, { input, output })
      if not ok then
        io.stderr:write("klineage worker: ", tostring(serr), "\n")
        return exit_codes.of("worker_unavailable")
      end
    end
    return serve(backend, worker, input, output, a.backend)
  end,
  serve = serve,
}
