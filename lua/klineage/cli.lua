-- The klineage command line: dispatches argv to lua/klineage/commands/*.lua.
-- Each command module returns { summary, usage, help, run = function(argv, env) }
-- where run returns an exit code. A usage error (see args.lua) prints one
-- line and exits 2; any other error propagates to the host's traceback.
local M = {}

-- The order of `klineage --help`.
M.commands = { "bench", "compile", "doctor", "gate", "journal", "match", "run", "test", "worker", "version", "help" }

local function load_command(name)
  if not name:match("^[%w_%-]+$") then return nil end
  local ok, mod = pcall(require, "klineage.commands." .. name:gsub("%-", "_"))
  if ok then return mod end
  if type(mod) == "string" and mod:find("module 'klineage.commands.", 1, true) then return nil end
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
  lines[#lines + 1] = "'klineage help COMMAND' shows a command's options."
  return table.concat(lines, "\n")
end

function M.main(argv, home)
  local env = { home = home, stdout = io.stdout, stderr = io.stderr }
  local name = argv[1]
  if name == nil or name == "--help" or name == "-h" then
    print(M.usage())
    return name == nil and 2 or 0
  end
  if name == "--version" then name = "version" end
  local cmd = load_command(name)
  if not cmd then
    io.stderr:write(string.format("klineage: unknown command '%s' (see 'klineage --help')\n", name))
    return 2
  end
  local rest = table.move(argv, 2, #argv, 1, {})
  for _, a in ipairs(rest) do
    if a == "--help" or a == "-h" then
      print(cmd.usage .. "\n\n" .. cmd.help)
      return 0
    end
  end
  local ok, result = pcall(cmd.run, rest, env)
  if ok then return result or 0 end
  if type(result) == "table" and result.usage then
    io.stderr:write(string.format("klineage %s: %s\n", name, result.usage))
    return 2
  end
  -- A structured error ({ verdict, message }) that escaped a command: say it.
  if type(result) == "table" and result.message then
    io.stderr:write(string.format("klineage %s: %s: %s\n", name, tostring(result.verdict or "error"), tostring(result.message)))
    return 1
  end
  error(result, 0)
end

return M
