-- Choosing the backend that runs candidates: cuda where a GPU answers, emu
-- where none does (ARCHITECTURE.md, "Backends"), or the one asked for.
--
--   backends.NAMES                  the backends a worker can run
--   backends.default() -> name, why
--   backends.check(name) -> true | nil, failure (bad_input: not one of NAMES),
--       for a command that names folders after the backend: checked before
--       any folder is made
--   backends.pool([name [, { timeout, start_timeout }]]) -> pool, name, why | nil, failure
local verdicts = require "klineage.verdicts"

local M = {}

M.NAMES = { "cuda", "emu", "fake" }

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
    require("klineage.files").display(tostring(name)), table.concat(M.NAMES, ", ")))
end

function M.pool(name, opts)
  opts = opts or {}
  local why
  if not name then name, why = M.default() end
  local known, kf = M.check(name)
  if not known then return nil, kf end
  local pool, f = require("klineage.worker.pool").new {
    backend = name, timeout = opts.timeout or 120, start_timeout = opts.start_timeout or 120,
  }
  if not pool then return nil, f end
  return pool, name, why
end

return M
