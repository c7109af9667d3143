-- Choosing the backend that runs candidates: cuda where a GPU answers, emu
-- where none does (ARCHITECTURE.md, "Backends"), or the one asked for.
local M = {}

-- The default backend name and why.
function M.default()
  local cuda = require "kl.cuda"
  local ok, why = cuda.load()
  if ok and #cuda.devices() > 0 then return "cuda", "a GPU answers" end
  return "emu", "no GPU: " .. tostring(why or "no device")
end

-- A worker pool for the named backend (default: M.default()).
function M.pool(name, opts)
  opts = opts or {}
  local why
  if not name then name, why = M.default() end
  local pool, err = require("klineage.worker.pool").new {
    backend = name, timeout = opts.timeout or 120, start_timeout = opts.start_timeout or 120,
  }
  if not pool then return nil, err end
  return pool, name, why
end

return M
