local args = require "klineage.base.args"
local exit_codes = require "klineage.base.exit_codes"

local FLAGS = { direction = "string", json = "boolean" }

-- The sites of a kernel file: the transforms' (family "decoration" or
-- "structural"), then the kernel IR's legal schedule applications (family
-- "schedule", direction apply) of each kernel that lifts, and each
-- kernel's lift: { sites = { site... }, kernels = { { fn, lifted, why } } }.
local function listing(text, direction)
  local sites = require("klineage.transforms").sites(text, { direction = direction })
  local schedules, kernels = require("klineage.kir").sites(text)
  if direction ~= "undo" then
    for _, s in ipairs(schedules) do sites[#sites + 1] = s end
  end
  return { sites = sites, kernels = kernels }
end

local JSON_FIELDS = { "transform", "family", "direction", "key", "fn", "line", "check" }
local SCHEDULE_FIELDS = { "primitive", "params", "text" }

return {
  flags = FLAGS,
  listing = listing,
  summary = "list the transforms, or the sites where they apply or undo in a kernel, schedule sites included",
  usage = "usage: klineage transforms [KERNEL.cu] [--direction apply|undo] [--json]",
  help = [[
Without a file: every transform (lua/klineage/transforms/) with its intent.
With a kernel file: every site a transform finds in it, with its direction
(apply: the optimization is absent and can be added; undo: it is there and
can be removed), its key, its line and the static check that allowed it;
then, for each __global__ function that lifts to the kernel IR, every
legal schedule primitive application (family "schedule", direction apply:
the primitive, its parameters and why it is legal; klineage schedule
applies them). A function that does not lift says why in one line.
Each site has a family: decoration (the kernel's structure stays as it
is: a qualifier, a hint, an intrinsic, a constant's value), structural
(a transform that changes loops, indexing or memory use) or schedule.

options:
  --direction D  only sites of this direction (apply or undo)
  --json         { "sites": [...], "kernels": [{ "fn", "lifted", "why" }] }
                 as JSON (without the parsed unit); the same bytes for the
                 same file on every run]],
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
    local l = listing(text, a.direction)
    if a.json then
      local sites = {}
      for i, s in ipairs(l.sites) do
        sites[i] = {}
        for _, f in ipairs(JSON_FIELDS) do sites[i][f] = s[f] end
        if s.family == "schedule" then
          for _, f in ipairs(SCHEDULE_FIELDS) do sites[i][f] = s[f] end
        end
      end
      local function list(t) return #t == 0 and "[]" or require("klineage.base.stable_json").encode(t) end
      io.stdout:write('{"kernels":', list(l.kernels), ',"sites":', list(sites), "}\n")
      return exit_codes.of("ok")
    end
    for _, s in ipairs(l.sites) do
      io.stdout:write(string.format("%-5s %-20s %-6s %-28s %s\n", tostring(s.line or "?"), s.transform, s.direction, s.key, s.check))
    end
    for _, k in ipairs(l.kernels) do
      if k.why then io.stdout:write(string.format("%s: no schedule sites: %s\n", k.fn, k.why)) end
    end
    io.stderr:write(string.format("%d sites\n", #l.sites))
    return exit_codes.of("ok")
  end,
}
