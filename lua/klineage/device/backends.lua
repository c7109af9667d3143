-- Choosing the backend that runs candidates: cuda where a GPU answers, emu
-- where none does (ARCHITECTURE.md, "Backends"), or the one asked for.
--
--   backends.NAMES                  the backends a worker can run
--   backends.default() -> name, why
--   backends.check(name) -> true | nil, failure (bad_input: not one of NAMES),
--       for a command that names folders after the backend: checked before
--       any folder is made
--   backends.pool([name [, { timeout, start_timeout }]]) -> pool, name, why | nil, failure
--   backends.traits(name) -> what the backend's numbers are worth, or nil
--       for a name that is none (an old journal's, a typo):
--     timed     its times are a kernel's on the device: a compare can keep
--               a change, and an effect is measured (cuda)
--     profiles  the gate's profile stage runs (cuda; fake too, which times
--               its Lua kernels on the host for the gate's own tests)
--     sizes     the sizes the gate checks by default: "all", or "test"
--               where a bench size takes hours on the CPU (emu)
--     host_code the kernel runs as host code the engine builds (emu)
--     gpus      the GPUs a cluster task of it asks for
--   Nothing outside the device and backend code compares backend names:
--   it asks these, or the run context (ctx.timed, ctx.profiles).
local verdicts = require "klineage.base.verdicts"

local M = {}

M.NAMES = { "cuda", "emu", "fake" }

local TRAITS = {
  cuda = { timed = true, profiles = true, sizes = "all", host_code = false, gpus = 1 },
  emu = { timed = false, profiles = false, sizes = "test", host_code = true, gpus = 0 },
  fake = { timed = false, profiles = true, sizes = "all", host_code = false, gpus = 1 },
}

function M.traits(name)
  return TRAITS[name]
end

function M.default()
  local cuda = require "kl.cuda"
  local ok, why = cuda.load()
  if ok and #cuda.devices() > 0 then return "cuda", "a GPU answers" end
  return "emu", "no GPU: " .. tostring(why or "no device")
end

function M.check(name)
  for _, n in ipairs(M.NAMES) do
    if n == name then return true end
  end
  return nil, verdicts.failure("bad_input", string.format("unknown backend '%s' (%s)",
    require("klineage.base.files").display(tostring(name)), table.concat(M.NAMES, ", ")))
end

function M.pool(name, opts)
  opts = opts or {}
  local why
  if not name then name, why = M.default() end
  local known, kf = M.check(name)
  if not known then return nil, kf end
  local pool, f = require("klineage.device.worker.pool").new {
    backend = name, timeout = opts.timeout or 120, start_timeout = opts.start_timeout or 120,
  }
  if not pool then return nil, f end
  return pool, name, why
end

return M
