-- The verdict registry and the one failure shape of the Lua layer.
--
-- Every verdict the engine gives has a stable id here, with the stage that
-- gives it, who is to blame, and a one-line meaning. Skills, guards and
-- reports key on these ids, so an id is never renamed; a new meaning gets a
-- new id.
--
-- The failure shape. At every boundary of a lua/klineage module:
--   * misuse (a wrong argument type, a call out of order) raises a string,
--     as luaL_argerror does in C;
--   * an expected failure returns nil, failure, where failure is a table
--     made by verdicts.failure: { verdict = <registered id>, message =
--     <one line>, ...detail fields }. tostring(failure) is
--     "verdict: message", and "text" .. failure works.
-- Inside a module a failure may be raised (verdicts.raise) and turned back
-- into nil, failure at the boundary (verdicts.catch). The kl.* C modules
-- keep C's convention: nil, message (a string); the Lua module that wraps
-- one gives the message a verdict.
--
--   verdicts.failure(id, message [, fields]) -> failure
--   verdicts.raise(id, message [, fields])       raises failure
--   verdicts.is_failure(x) -> boolean
--   verdicts.catch(fn, ...) -> fn's results | nil, failure
--       a raised failure comes back as nil, failure; any other error is a
--       bug and is raised again, with the traceback of where it happened.
--   verdicts.protect(fn, ...) -> as catch, but a bug becomes an
--       "internal" failure (for loops that must answer and go on).
--   verdicts.lift(id, ...) -> ... with (nil, message) made (nil, failure)
--   verdicts.get(id) -> { id, stage, blame, meaning } | nil
--   verdicts.list -> the entries, in registry order
local M = {}

-- blame: who a verdict is about.
--   candidate  the kernel under judgement
--   baseline   the reference kernel it is judged against
--   input      what a user gave: a file, a spec, an option, an annotation
--   backend    what the backend cannot do (emu has no tensor cores)
--   engine     klineage itself or the machine under it: never the kernel
--   budget     the run's budget
--   transform  a transform asked to act where its static check fails
--   llm        the LLM provider or its answer (lua/klineage/llm): the
--              skill and the kernel are not at fault
--   none       nothing is wrong
M.list = {
  { id = "ok", stage = "any", blame = "none", meaning = "every stage that ran passed" },
  { id = "skipped", stage = "any", blame = "none", meaning = "the stage did not run; its message says why" },
  { id = "compile_error", stage = "compile", blame = "candidate", meaning = "NVRTC (or emu's host compiler) rejected the kernel" },
  { id = "compile_timeout", stage = "compile", blame = "candidate", meaning = "NVRTC (or emu's host compiler) did not finish within the compile time limit (the run context's compile_limit) and was stopped" },
  { id = "bad_input", stage = "input", blame = "input", meaning = "a file, spec, option or annotation is malformed or does not fit the workload" },
  { id = "not_allowed", stage = "correct", blame = "candidate", meaning = "the kernel's @kl requires excludes this size" },
  { id = "too_few_sizes", stage = "correct", blame = "candidate", meaning = "the kernel's @kl requires leaves fewer than two sizes to check" },
  { id = "wrong", stage = "correct", blame = "candidate", meaning = "an output differs from the reference beyond the tolerance" },
  { id = "mutated_input", stage = "correct", blame = "candidate", meaning = "the kernel changed a buffer it must only read" },
  { id = "fault", stage = "run", blame = "candidate", meaning = "the kernel crashed its worker or raised a device error, twice" },
  { id = "launch_error", stage = "run", blame = "candidate", meaning = "the device refused the launch: too many threads, registers or shared memory for it" },
  { id = "timeout", stage = "run", blame = "candidate", meaning = "the kernel did not finish within the request's time" },
  { id = "unsupported", stage = "run", blame = "backend", meaning = "the backend cannot run a construct the kernel uses" },
  { id = "out_of_bounds", stage = "run", blame = "candidate", meaning = "the kernel wrote outside its buffers: a canary around one, or the reference copy, changed" },
  { id = "suspicious", stage = "profile", blame = "candidate", meaning = "faster than the anti-cheat bound that no correct kernel can beat" },
  { id = "stale_after_timing", stage = "profile", blame = "candidate", meaning = "the output was wrong on fresh inputs after the timed launches" },
  { id = "not_applicable", stage = "transform", blame = "transform", meaning = "a transform's static check does not hold at the site it was asked to edit" },
  { id = "baseline_broken", stage = "any", blame = "baseline", meaning = "the baseline failed to compile, run, agree with itself or agree with the workload's C reference: the candidate was not judged" },
  { id = "budget_exhausted", stage = "any", blame = "budget", meaning = "the run's budget of gate cycles is spent: the candidate was not judged" },
  { id = "worker_unavailable", stage = "run", blame = "engine", meaning = "the worker process could not be started, or did not answer its hello" },
  { id = "worker_lost", stage = "run", blame = "engine", meaning = "the worker died from outside (killed, out of memory) twice while running a kernel" },
  { id = "io_error", stage = "any", blame = "engine", meaning = "the engine could not read or write a file it needed (a full disk, a read-only folder)" },
  { id = "bad_request", stage = "run", blame = "engine", meaning = "the engine sent the worker a malformed request (an engine bug)" },
  { id = "slurm_error", stage = "cluster", blame = "engine", meaning = "a Slurm command (sbatch, squeue, scancel) could not run or refused: its message is as it printed it" },
  { id = "internal", stage = "any", blame = "engine", meaning = "a bug in klineage: the message has the detail" },
  { id = "llm_unavailable", stage = "llm", blame = "llm", meaning = "the LLM provider could not be reached, timed out, or kept failing (429/5xx) after its retries: the caller goes on without it" },
  { id = "llm_refused", stage = "llm", blame = "llm", meaning = "the LLM provider refused the request (a 4xx status other than a rate limit: a bad key, an unknown model)" },
  { id = "llm_bad_answer", stage = "llm", blame = "llm", meaning = "the LLM provider's response is not the shape its API promises (not JSON, no message)" },
  { id = "llm_replay_miss", stage = "llm", blame = "llm", meaning = "the replay transcript holds no answer for this prompt" },
  { id = "llm_no_code", stage = "llm", blame = "llm", meaning = "the LLM's answer holds no C/C++/CUDA code" },
  { id = "llm_bad_signature", stage = "llm", blame = "llm", meaning = "the LLM's code does not define the kernel's entry, or changes its parameter kinds" },
}

local by_id = {}
for _, v in ipairs(M.list) do by_id[v.id] = v end

function M.get(id) return by_id[id] end

local Failure = {}
Failure.__index = Failure
Failure.__tostring = function(f) return f.verdict .. ": " .. tostring(f.message) end
Failure.__concat = function(a, b) return tostring(a) .. tostring(b) end

function M.failure(id, message, fields)
  if not by_id[id] then error("verdicts.failure: unregistered verdict '" .. tostring(id) .. "'", 2) end
  local f = {}
  for k, v in pairs(fields or {}) do f[k] = v end
  f.verdict, f.message = id, message ~= nil and tostring(message) or by_id[id].meaning
  return setmetatable(f, Failure)
end

function M.raise(id, message, fields)
  error(M.failure(id, message, fields), 0)
end

function M.is_failure(x) return getmetatable(x) == Failure end

-- lift(id, ...): a result in C's convention (nil, message) in the failure
-- shape, for a module whose helpers compose plain messages; any other
-- result passes through.
function M.lift(id, first, second, ...)
  if first == nil and type(second) == "string" then return nil, M.failure(id, second) end
  return first, second, ...
end

-- A bug keeps its traceback through catch: the handler adds it where the
-- error was raised.
local function handler(e)
  if getmetatable(e) == Failure or type(e) ~= "string" then return e end
  return debug.traceback(e, 2)
end

local function caught(ok, ...)
  if ok then return ... end
  local e = ...
  if getmetatable(e) == Failure then return nil, e end
  error(e, 0)
end

function M.catch(fn, ...)
  return caught(xpcall(fn, handler, ...))
end

local function protected(ok, ...)
  if ok then return ... end
  local e = ...
  if getmetatable(e) == Failure then return nil, e end
  return nil, M.failure("internal", tostring(e))
end

-- As catch, but any other error becomes an "internal" failure: for the
-- outermost loops (a worker's serve loop) that must answer and go on.
function M.protect(fn, ...)
  return protected(xpcall(fn, handler, ...))
end

return M
