local exit_codes = require "klineage.base.exit_codes"

return {
  flags = { verbose = "boolean" },
  summary = "run Lua spec files (describe/it/expect) inside the engine",
  usage = "usage: klineage test [--verbose] FILE...",
  help = [[
Runs each FILE in the engine's own Lua state, with the kl.* modules
available and describe/it/expect in scope (see lua/klineage/cli/testing.lua).
Prints a line per failure with the spec's file:line, then
"N passed, N failed". Exits 1 when anything failed.

options:
  --verbose   print every passing case too]],
  run = function(argv)
    local a = require("klineage.base.args").parse(argv, { flags = { verbose = "boolean" }, min = 1 })
    for _, f in ipairs(a.positional) do
      local _, ferr = require("klineage.base.files").read_file(f)
      if ferr then require("klineage.base.args").usage_error("%s", ferr.message) end
    end
    local _, failed = require("klineage.cli.testing").run(a.positional, { verbose = a.verbose })
    return exit_codes.of(failed == 0 and "ok" or "failed")
  end,
}
