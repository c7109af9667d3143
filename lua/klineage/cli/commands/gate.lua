local args = require "klineage.base.args"
local exit_codes = require "klineage.base.exit_codes"

local function show_stage(name, s, out)
  if not s then return end
  out:write(string.format("  %-8s %-18s %s\n", name, s.verdict or "?", s.message or ""))
end

-- The options, as args.parse takes them (tests/lua/cli_input_spec.lua
-- holds the help to them).
local FLAGS = { kernel = "string", metrics = "boolean", json = "boolean", backend = "string", journal = "string" }

return {
  flags = FLAGS,
  summary = "run one kernel through the compile / correctness / profile gate",
  usage = "usage: klineage gate WORKLOAD [--kernel FILE] [--metrics] [--json] [--backend cuda|emu] [--journal DIR]",
  help = [[
Evaluates one kernel of a workload (gpu/workloads/<name>, or a workload
folder's path; the one taken is printed): compiles it, checks it against
the lineage's first version over every size its `@kl requires` allows and
three seeds, times it at the bench size (CUPTI, L2 flushed, adaptive
samples) and, with --metrics, reads the default CUPTI metric set. Without
--kernel, the lineage's last version.
When the workload declares a C reference (reference = "reference.c"), the
first version is checked against it first, at the test sizes (the "cref"
line); a first version that disagrees is baseline_broken.
On the emu backend (no GPU) it checks correctness at the test sizes only,
and says that there is no timing.

A kernel file that cannot be read (missing, unreadable, not a regular file
such as a directory, a FIFO or a device, over 4 MiB, or binary) is refused
before a run exists: one line says why, and nothing is journaled.

Exit code: 0 when every stage passed, 1 when a stage rejected the kernel,
2 for bad input: an option, the workload, the kernel file, the runs folder,
or a verdict of bad_input (a malformed annotation, a parameter the gate
cannot pass).

options:
  --kernel FILE     the candidate kernel (default: the last lineage version)
  --metrics         also collect the default metric set
  --json            print the evaluation record as JSON
  --backend NAME    cuda (default where a GPU answers), emu, or fake (the
                    engine's own test backend)
  --journal DIR     the runs folder: the record goes to DIR/<run id>/journal.jsonl
                    (default $KLINEAGE_RUNS, else $XDG_STATE_HOME/klineage/runs,
                    else ~/.local/state/klineage/runs)]],
  run = function(argv)
    local a = args.parse(argv, { flags = FLAGS, min = 1, max = 1 })
    local files = require "klineage.base.files"
    local w = require("klineage.cli").load_workload(a.positional[1])
    io.stderr:write(string.format("klineage gate: workload %s (%s)\n", require("klineage.base.term").text(w.name), files.display(w.path)))
    local file = a.kernel or (w.lineage and w.dir .. "/" .. w.lineage[#w.lineage])
    if not file then args.usage_error("the workload has no lineage: give --kernel FILE") end
    -- An unreadable kernel is the user's input error, before any run
    -- exists. It is read once: the gate judges this very text.
    local text, rerr = files.read_text(file)
    if not text then args.usage_error("%s", rerr.message) end
    local ctx, code = require("klineage.cli").open_context("gate", { backend = a.backend, journal = a.journal,
      command = { "klineage", "gate", table.unpack(argv) }, workloads = { w } })
    if not ctx then return code end
    local backend, why = ctx.backend, ctx.why
    local r, stop = require("klineage.base.verdicts").catch(require("klineage.gate").evaluate, ctx, { file = file, source = text,
      label = file:match("[^/]+$"), provenance = { producer = { kind = a.kernel and "user" or "lineage", name = file } } },
      w, { metrics = a.metrics })
    local run_dir = ctx.run and ctx.run.dir
    ctx:close()
    if not r then
      -- The journal could not take the record (a full disk): the verdict
      -- is still said, with why it is not in the journal.
      r = stop.record
      if not r then
        io.stderr:write("klineage gate: ", tostring(stop), "\n")
        return exit_codes.of(stop)
      end
      io.stderr:write("klineage gate: the record is not in the journal: ", tostring(stop), "\n")
    elseif run_dir then
      io.stderr:write("klineage gate: journal in ", files.display(run_dir), "\n")
    end
    if a.json then
      print((require("klineage.base.stable_json").encode(r):gsub("\\/", "/")))
    else
      io.stdout:write(string.format("%s on %s (%s%s): %s\n", files.display(file), r.device and r.device.name or backend, backend,
        why and ", " .. why or "", r.verdict))
      show_stage("compile", r.stages.compile, io.stdout)
      show_stage("cref", r.stages.reference, io.stdout)
      show_stage("correct", r.stages.correct, io.stdout)
      local p = r.stages.profile
      if p and p.median_ms then
        -- The fake backend times Lua on the host and gives no interval.
        local ci = p.ci_ms and string.format(" [%.4f, %.4f]", p.ci_ms[1], p.ci_ms[2]) or ""
        io.stdout:write(string.format("  profile  %-18s %.4f ms%s n=%d (%s), %.1f GFLOP/s, %.1f GB/s%s, SM %s MHz%s\n",
          p.verdict, p.median_ms, ci, #(p.samples_ms or {}), p.source or "?", p.gflops, p.gbps,
          p.pct_of_roofline and string.format(", %.0f%% of roofline", p.pct_of_roofline) or "",
          p.clock_mhz and string.format("%.0f", p.clock_mhz) or "?", p.throttled and " (THROTTLED)" or ""))
      else
        show_stage("profile", p, io.stdout)
      end
      if r.stages.metrics and r.stages.metrics.values then
        local names = {}
        for k in pairs(r.stages.metrics.values) do names[#names + 1] = k end
        table.sort(names)
        for _, k in ipairs(names) do io.stdout:write(string.format("  metric   %-64s %.6g\n", k, r.stages.metrics.values[k])) end
      end
    end
    if stop then return exit_codes.of(stop) end -- judged, but the run lost its record
    return exit_codes.of(r)
  end,
}
