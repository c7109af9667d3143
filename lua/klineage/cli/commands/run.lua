local exit_codes = require "klineage.base.exit_codes"

return {
  summary = "run a Lua workflow script with the kl modules available",
  usage = "usage: klineage run SCRIPT.lua [ARGS...]",
  passthrough = true, -- ARGS are the script's, a --help among them too
  help = [[
Runs SCRIPT.lua in the engine's Lua state. The script sees the global
`arg` (arg[0] is the script, arg[1..] its arguments) and can require the
kl.* core modules and the klineage.* Lua modules. Errors show a traceback
that points at the script's own lines. The script's return value, when it
is an integer, becomes the exit code.]],
  run = function(argv)
    local script = argv[1]
    if not script then require("klineage.base.args").usage_error("missing SCRIPT.lua") end
    -- Read as a source is (a FIFO or a device is refused before reading),
    -- then loaded as loadfile would: text or precompiled chunk.
    local text, f = require("klineage.base.files").read_file(script)
    if not text then require("klineage.base.args").usage_error("%s", f.message) end
    if text:sub(1, 1) == "#" then text = text:gsub("^#[^\n]*", "", 1) end -- a #! line, as loadfile skips it
    local chunk, err = load(text, "@" .. script)
    if not chunk then require("klineage.base.args").usage_error("%s", err) end
    local script_arg = { [0] = script }
    for i = 2, #argv do script_arg[i - 1] = argv[i] end
    _G.arg = script_arg
    -- The traceback stops at the script's frames: the engine's own frames
    -- below it would only hide where the error came from.
    local ok, result = xpcall(chunk, function(e)
      local tb = debug.traceback(tostring(e), 2)
      local cut = tb:find("\n%s*%[C%]: in function 'xpcall'")
      return cut and tb:sub(1, cut - 1) or tb
    end, table.unpack(script_arg))
    if not ok then
      io.stderr:write("klineage run: " .. result .. "\n")
      return exit_codes.of("failed")
    end
    -- The script's own integer is its exit code, as documented: it is the
    -- script's answer, not an outcome of klineage's.
    return math.type(result) == "integer" and result or exit_codes.of("ok")
  end,
}
