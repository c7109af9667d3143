local exit_codes = require "klineage.base.exit_codes"
local host = require "kl.host"

return {
  summary = "print the klineage version",
  usage = "usage: klineage version",
  help = "Prints the version of klineage and of the Lua it embeds.",
  run = function(argv)
    require("klineage.base.args").parse(argv, { max = 0 })
    print(string.format("klineage %s (%s)", host.version, host.lua_release))
    return exit_codes.of("ok")
  end,
}
