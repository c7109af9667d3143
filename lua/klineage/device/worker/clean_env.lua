-- What a worker's environment must not hold: secrets. On emu a kernel is
-- host code inside the worker and can read its environment (getenv,
-- environ, /proc/self/environ), so every worker starts without the LLM
-- providers' keys and settings and without any name that reads as a
-- credential, whether the engine's own environment or the pool's env
-- option holds it.
--
--   clean_env.secret(name) -> boolean
--   clean_env.overlay(env) -> a proc.spawn env: env's entries that are not
--       secret, and false for every secret name of this process's
--       environment (proc.spawn removes those)
local proc = require "kl.proc"

local M = {}

-- Prefixes of the providers' settings (lua/klineage/llm/providers):
-- KLINEAGE_LLM_API_KEY and the rest, OPENAI_API_KEY, ANTHROPIC_API_KEY.
local PREFIXES = { "KLINEAGE_LLM_", "OPENAI_", "ANTHROPIC_" }

-- Words of a credential's name: *_API_KEY, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY,
-- PGPASSWORD, SSH_AUTH_SOCK (an agent that signs for us), XAUTHORITY.
local WORDS = { "KEY", "TOKEN", "SECRET", "PASSW", "CREDENTIAL", "AUTH", "COOKIE", "SESSION" }

function M.secret(name)
  local up = name:upper()
  for _, p in ipairs(PREFIXES) do
    if up:sub(1, #p) == p then return true end
  end
  for _, w in ipairs(WORDS) do
    if up:find(w, 1, true) then return true end
  end
  return false
end

function M.overlay(env)
  local out = {}
  for k, v in pairs(env or {}) do
    if not M.secret(k) then out[k] = v end
  end
  for _, name in ipairs(proc.environ_names()) do
    if M.secret(name) then out[name] = false end
  end
  for k in pairs(env or {}) do
    if M.secret(k) then out[k] = false end
  end
  return out
end

return M
