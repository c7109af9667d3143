local exit_codes = require "klineage.base.exit_codes"

return {
  summary = "show help for a command",
  usage = "usage: klineage help [COMMAND]",
  help = "Without COMMAND, lists the commands. With COMMAND, shows its usage and options.",
  run = function(argv)
    local a = require("klineage.base.args").parse(argv, { max = 1 })
    local cli = require "klineage.cli"
    local name = a.positional[1]
    if not name then
      print(cli.usage())
      return exit_codes.of("ok")
    end
    local cmd = cli.load_command(name)
    if not cmd then require("klineage.base.args").usage_error("unknown command '%s'", name) end
    print(cmd.usage .. "\n\n" .. cmd.help)
    return exit_codes.of("ok")
  end,
}
