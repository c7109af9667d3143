local args = require "klineage.base.args"
local exit_codes = require "klineage.base.exit_codes"

local FLAGS = { direction = "string", json = "boolean" }

return {
  flags = FLAGS,
  summary = "list the transforms, or the sites where they apply or undo in a kernel",
  usage = "usage: klineage transforms [KERNEL.cu] [--direction apply|undo] [--json]",
  help = [[
Without a file: every transform (lua/klineage/transforms/) with its intent.
With a kernel file: every site a transform finds in it, with its direction
(apply: the optimization is absent and can be added; undo: it is there and
can be removed), its key, its line and the static check that allowed it.

options:
  --direction D  only sites of this direction (apply or undo)
  --json         the sites as JSON (without the parsed unit)]],
  run = function(argv)
    local a = args.parse(argv, { flags = FLAGS, min = 0, max = 1 })
    local transforms = require "klineage.transforms"
    if a.direction and a.direction ~= "apply" and a.direction ~= "undo" then
      args.usage_error("--direction is apply or undo, got '%s'", a.direction)
    end
    if not a.positional[1] then
      for _, t in ipairs(transforms.all()) do io.stdout:write(string.format("%-22s %s\n", t.name, t.intent)) end
      return exit_codes.of("ok")
    end
    local text, rerr = require("klineage.base.files").read_text(a.positional[1])
    if not text then args.usage_error("%s", rerr.message) end
    local sites = transforms.sites(text, { direction = a.direction })
    if a.json then
      local out = {}
      for i, s in ipairs(sites) do
        out[i] = { transform = s.transform, direction = s.direction, key = s.key, fn = s.fn, line = s.line, check = s.check }
      end
      io.stdout:write((require("klineage.base.stable_json").encode(out):gsub("\\/", "/"):gsub("^{}$", "[]")), "\n")
      return exit_codes.of("ok")
    end
    for _, s in ipairs(sites) do
      io.stdout:write(string.format("%-5s %-20s %-6s %-28s %s\n", tostring(s.line or "?"), s.transform, s.direction, s.key, s.check))
    end
    io.stderr:write(string.format("%d sites\n", #sites))
    return exit_codes.of("ok")
  end,
}
