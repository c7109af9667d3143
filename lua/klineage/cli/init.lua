-- The klineage command line: dispatches argv to lua/klineage/cli/commands/*.lua.
-- Each command module returns { summary, usage, help, run = function(argv, env)
-- [, passthrough = true] } where run returns an exit code; passthrough
-- means the words after the command's first argument are not its own (a
-- script's), so a --help among them is not the command's.
--
-- Exit codes come from klineage.base.exit_codes, by blame, for every command: a
-- usage error (see args.lua) prints one line and exits 2; a failure
-- (klineage.base.verdicts) that escapes a command prints one line, "klineage
-- CMD: verdict: message", and exits with its blame's code; any other error
-- is a bug and propagates to the host's traceback. What a line shows of
-- outside text (a message, a name) goes through klineage.base.term.text:
-- control characters as C escapes.
local exit_codes = require "klineage.base.exit_codes"
local term = require "klineage.base.term"

local M = {}

-- The order of `klineage --help`.
M.commands = { "bench", "compile", "doctor", "gate", "journal", "lift", "schedule", "deltas", "match", "optimize", "eval", "report", "run", "skills", "test", "slurm", "transforms", "walk", "worker", "version", "help" }

local function load_command(name)
  if not name:match("^[%w_%-]+$") then return nil end
  local ok, mod = pcall(require, "klineage.cli.commands." .. name:gsub("%-", "_"))
  if ok then return mod end
  if type(mod) == "string" and mod:find("module 'klineage.cli.commands.", 1, true) then return nil end
  error(mod, 0)
end
M.load_command = load_command

function M.usage()
  local lines = {
    "usage: klineage COMMAND [ARGS...]",
    "",
    "klineage learns when GPU-kernel optimizations are sound, from expert CUDA kernels.",
    "",
    "commands:",
  }
  for _, name in ipairs(M.commands) do
    local cmd = load_command(name)
    lines[#lines + 1] = string.format("  %-10s %s", name, cmd.summary)
  end
  lines[#lines + 1] = ""
  lines[#lines + 1] = "options:"
  lines[#lines + 1] = "  --help, -h  this list; 'klineage help COMMAND' (or COMMAND --help) shows a command's options"
  lines[#lines + 1] = "  --version   the version, as 'klineage version'"
  return table.concat(lines, "\n")
end

-- The workload a command names (klineage.workload.load), or a usage error
-- (exit 2) that says why in one line. Loading a spec runs its code: what
-- it raises while loading is the spec's fault too.
function M.load_workload(ref)
  local ok, w, f = pcall(require("klineage.workload").load, ref)
  if not ok then
    local why = type(w) == "table" and (w.message or w.msg) or w
    require("klineage.base.args").usage_error("cannot load the workload '%s': %s", require("klineage.base.files").display(ref),
      (tostring(why):gsub("\n.*", "")))
  end
  if not w then require("klineage.base.args").usage_error("%s", (tostring(f.message):gsub("\n.*", ""))) end
  return w
end

-- The run context of command `name` (klineage.device.context.new(opts)), or nil
-- and the command's exit code after one line that says why. The run's
-- folder is the user's: exit_codes' "open_run" says so.
function M.open_context(name, opts)
  local ctx, f = require("klineage.device.context").new(opts)
  if ctx then return ctx end
  io.stderr:write(string.format("klineage %s: %s\n", name, term.text(f.message)))
  return nil, exit_codes.of(f, "open_run")
end

function M.main(argv, home)
  local env = { home = home, stdout = io.stdout, stderr = io.stderr }
  local name = argv[1]
  if name == nil or name == "--help" or name == "-h" then
    print(M.usage())
    return exit_codes.of(name == nil and "usage" or "ok")
  end
  if name == "--version" then name = "version" end
  local cmd = load_command(name)
  if not cmd then
    io.stderr:write(string.format("klineage: unknown command '%s' (see 'klineage --help')\n", term.text(name)))
    return exit_codes.of("usage")
  end
  local rest = table.move(argv, 2, #argv, 1, {})
  for i, a in ipairs(rest) do
    if a == "--" or (cmd.passthrough and i > 1) then break end
    if a == "--help" or a == "-h" then
      print(cmd.usage .. "\n\n" .. cmd.help)
      return exit_codes.of("ok")
    end
  end
  local ok, result = pcall(cmd.run, rest, env)
  if ok then return result or exit_codes.of("ok") end
  if type(result) == "table" and result.usage then
    io.stderr:write(string.format("klineage %s: %s\n", name, term.text(result.usage)))
    return exit_codes.of("usage")
  end
  -- A failure ({ verdict, message }) that escaped a command: say it, on one line.
  if type(result) == "table" and result.message then
    local verdict = tostring(result.verdict or "error")
    local message = tostring(result.message):gsub("\n.*", "")
    io.stderr:write(string.format("klineage %s: %s: %s\n", name, term.text(verdict), term.text(message)))
    -- A table that only looks like a failure (no registered verdict) is
    -- no verdict's: the engine failed to say what went wrong.
    return exit_codes.of(require("klineage.base.verdicts").get(verdict) and verdict or "internal")
  end
  error(result, 0)
end

return M
