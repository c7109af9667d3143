-- klineage report RUN: a run's report regenerated from its journal alone
-- (klineage.report): no GPU, nothing judged again.
local args = require "klineage.base.args"
local exit_codes = require "klineage.base.exit_codes"

local FLAGS = { html = "boolean", open_in = "string", journal = "string" }

return {
  flags = FLAGS,
  summary = "regenerate a run's report (Markdown and one HTML page) from its journal",
  usage = "usage: klineage report RUN [--html] [--open-in DIR] [--journal DIR]",
  help = [[
Renders the report of a run from its journal (RUN/journal.jsonl) and the
kernels in RUN/src/, with no GPU and nothing run again, and writes
RUN/report.md (Markdown: the text and the tables) and RUN/report.html (one
self-contained page: the style inline, the charts as inline SVG, no
script, no request to anywhere). Every bench and walk writes them at its
end; this writes them again, for instance after a resumed run or a change
of reports/style/report.css or reports/templates/page.html.

The kind of report follows from the command that made the run: bench (the
lineage table, time and roofline charts, the vendor's bar, failures) or
walk (the chain, each step's diff, gate numbers, changed facts and judged
candidates, and a card for each skill learned from the journal). A run made
by a script (klineage run) is a walk when its journal has walk steps, else a
bench.

Prints the paths written, one a line (report.md, then report.html).

Exit code: 0 when both files were written, 2 when RUN is not a run folder,
its journal has no report kind, a kernel in RUN/src/ does not match its
SHA-256 (changed after the run stored it: never shown as genuine) or
another command holds the run folder, 1 when a file cannot be written.

options:
  --html           print only the HTML page's path (for a browser:
                   xdg-open "$(klineage report RUN --html)"); both files
                   are written all the same
  --open-in DIR    write the two files into DIR (created) instead of RUN,
                   for a run folder that is read-only or shared
  --journal DIR    the runs folder, where RUN is a run id (default
                   $KLINEAGE_RUNS, else $XDG_STATE_HOME/klineage/runs, else
                   ~/.local/state/klineage/runs)]],
  run = function(argv)
    local a = args.parse(argv, { flags = FLAGS, min = 1, max = 1 })
    local dir, f = require("klineage.store.runs").find(a.positional[1], a.journal)
    if not dir then args.usage_error("%s", f.message) end
    local written, wf = require("klineage.report").write(dir, a.open_in)
    if not written then
      io.stderr:write("klineage report: ", wf.verdict, ": ", (tostring(wf.message):gsub("\n.*", "")), "\n")
      return exit_codes.of(wf)
    end
    local files = require "klineage.base.files"
    if not a.html then io.stdout:write(files.display(written.md), "\n") end
    io.stdout:write(files.display(written.html), "\n")
    return exit_codes.of("ok")
  end,
}
