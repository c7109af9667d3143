-- A local program as the model: the prompt goes to its stdin, its stdout
-- is the answer. `command` is a shell command line (run by /bin/sh -c) or
-- an argv list. The program sees KLINEAGE_LLM_MODEL (when a model is set);
-- a system prompt comes first on stdin, followed by a blank line. It
-- inherits this process's environment less the LLM settings and keys it
-- is not meant for (ctx.child_env, klineage.llm says which): it keeps
-- KLINEAGE_LLM_API_KEY, for a wrapper around a hosted model.
--
--   command.complete(ctx, cfg, prompt, system) -> text, {} | nil, failure
--       llm_unavailable: the program cannot start, exits non-zero (its
--       stderr's last lines in the message), or exceeds cfg.timeout
local proc = require "kl.proc"
local verdicts = require "klineage.base.verdicts"

local M = {}

local function argv_of(command)
  if type(command) == "string" then return { "/bin/sh", "-c", command } end
  return command
end

local function tail(text, n)
  text = text:gsub("%s+$", "")
  if #text > n then text = "..." .. text:sub(-n) end
  return text
end

function M.complete(ctx, cfg, prompt, system)
  local scrub = ctx.scrub
  local input = system and (system .. "\n\n" .. prompt) or prompt
  local p, err = proc.spawn { argv = argv_of(cfg.command), env = ctx.child_env or { KLINEAGE_LLM_MODEL = cfg.model or false } }
  if not p then
    return nil, verdicts.failure("llm_unavailable", scrub("the command cannot start: " .. err), { attempts = 1 })
  end
  local deadline = require("kl.host").clock() + cfg.timeout
  local function left() return math.max(0, deadline - require("kl.host").clock()) end
  local ok, werr = p:write(input, left())
  p:close_stdin()
  local out, rerr
  if ok or werr ~= "timeout" then out, rerr = p:read_all(left()) end
  if not ok and werr == "timeout" or rerr == "timeout" then
    p:close()
    return nil, verdicts.failure("llm_unavailable", string.format(
      "the command gave no answer within %g s", cfg.timeout), { attempts = 1, kind = "timeout" })
  end
  local status = p:wait(math.max(1, left()))
  local stderr = p:stderr()
  p:close()
  if not status then
    return nil, verdicts.failure("llm_unavailable", string.format(
      "the command closed its output but did not exit within %g s", cfg.timeout), { attempts = 1, kind = "timeout" })
  end
  if status.code ~= 0 then
    local how = status.signal and ("was killed by " .. status.signal) or ("exited with " .. status.code)
    return nil, verdicts.failure("llm_unavailable", scrub(string.format(
      "the command %s: %s", how, tail(stderr, 500))), { attempts = 1 })
  end
  if not out then
    return nil, verdicts.failure("llm_unavailable", "the command's output: " .. tostring(rerr), { attempts = 1 })
  end
  return out, {}
end

return M
