local args = require "klineage.base.args"
local exit_codes = require "klineage.base.exit_codes"

local function stage_line(r)
  local st = r.stages or {}
  local p = st.profile or {}
  if p.median_ms then return string.format("%.4f ms", p.median_ms) end
  for _, name in ipairs({ "profile", "correct", "compile" }) do
    local s = st[name]
    if s and s.verdict ~= "ok" and s.message then return (s.message:gsub("\n.*", "")) end
  end
  return r.message or ""
end

-- One line a record: what it is, about what, and its verdict.
local function describe(r)
  if r.kind == "run" or r.kind == "resume" then
    return r.kind, string.format("%s %s on %s", r.backend or "?", r.arch or "?", r.device and r.device.name or "?"), "",
      table.concat(r.command or {}, " ")
  elseif r.kind == "evaluation" then
    return "eval", (r.candidate or {}).label or "?", r.verdict or "?", stage_line(r)
  elseif r.kind == "comparison" then
    local res = r.result or {}
    return "compare", string.format("%s vs %s", (r.a or {}).label or "a", (r.b or {}).label or "b"), r.verdict or "?",
      res.speedup and string.format("%s %.3fx", res.outcome, res.speedup) or (r.message or "")
  elseif r.kind == "vendor" then
    return "vendor", r.routine or "?", "ok", string.format("%d size(s)", #(r.rows or {}))
  end
  return r.kind or "?", "", "", ""
end

local FLAGS = { journal = "string", json = "boolean" }

return {
  flags = FLAGS,
  summary = "read a run's journal back: one line per record, or the records as JSON",
  usage = "usage: klineage journal show RUN [--journal DIR] [--json]",
  help = [[
Reads the journal of a run (an id under the runs folder, or a run folder's
path) and prints one line per record: its number, kind, what it is about,
its verdict, and its time or the reason it failed. A torn last line (a
crashed run) is skipped with a warning on stderr; the file is never changed.

options:
  --journal DIR   the runs folder (default $KLINEAGE_RUNS, else
                  $XDG_STATE_HOME/klineage/runs, else
                  ~/.local/state/klineage/runs)
  --json          print the records as one JSON array]],
  run = function(argv)
    local a = args.parse(argv, { flags = FLAGS, min = 2, max = 2 })
    if a.positional[1] ~= "show" then args.usage_error("unknown verb '%s' (show)", a.positional[1]) end
    local runs = require "klineage.store.runs"
    local dir, f = runs.find(a.positional[2], a.journal)
    if not dir then args.usage_error("%s", f.message) end
    local records, warnings = require("klineage.store.journal").read(dir .. "/journal.jsonl")
    if not records then
      io.stderr:write("klineage journal: ", warnings.message, "\n")
      return exit_codes.of(warnings)
    end
    local t = require("klineage.base.term").text
    for _, w in ipairs(warnings) do io.stderr:write("klineage journal: ", t(w), "\n") end
    if a.json then
      print((require("klineage.base.stable_json").encode(records):gsub("\\/", "/")))
      return exit_codes.of("ok")
    end
    local out = io.stdout
    out:write(string.format("run %s: %d records\n", t(dir), #records))
    out:write(string.format("%5s  %-8s %-30s %-16s %s\n", "seq", "kind", "what", "verdict", "detail"))
    for _, r in ipairs(records) do
      local kind, what, verdict, detail = describe(r)
      local seq = math.tointeger(r.seq) or r.seq or "?" -- JSON numbers come back floats
      -- every field is the journal's, so outside text: escaped
      out:write(string.format("%5s  %-8s %-30s %-16s %s\n", t(seq), t(kind), t(what), t(verdict), t(detail)))
    end
    return exit_codes.of("ok")
  end,
}
