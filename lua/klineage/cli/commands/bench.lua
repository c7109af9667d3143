local args = require "klineage.base.args"
local exit_codes = require "klineage.base.exit_codes"

-- The progress line's best so far: the fastest version judged ok with its
-- time at the bench size; on emu, where nothing is timed, how many passed.
local function best_so_far(done, lineage)
  local fastest, ms, passed = nil, nil, 0
  for i = 1, #lineage do
    local r = done[i]
    if r and r.verdict == "ok" then
      passed = passed + 1
      local t = r.stages and r.stages.profile and r.stages.profile.median_ms
      if t and (not ms or t < ms) then fastest, ms = lineage[i], t end
    end
  end
  if fastest then return string.format("fastest %s %.4f ms", fastest, ms) end
  if passed > 0 then return string.format("%d passed", passed) end
end

-- The lines above the table: the run, the ceilings, the vendor's bar and
-- the column heads. t.has_vendor is known before any version is judged:
-- the vendor is measured first.
local function print_header(out, w, ctx, ceilings, run_dir, device, vendor, verr, has_vendor)
  out:write(string.format("%s on %s (%s backend%s), run %s\n", w.name, device and device.name or "?", ctx.backend,
    ctx.why and "; " .. ctx.why or "", run_dir or "not journaled"))
  if ceilings then
    out:write(string.format("ceilings: copy %.0f GB/s, read %.0f GB/s, fp32 %.1f TFLOP/s%s\n",
      ceilings.copy_gbps, ceilings.read_gbps, ceilings.fp32_tflops, ceilings.cached and " (cached)" or ""))
  elseif ctx.timed then
    out:write("ceilings: not measured\n")
  end
  if not ctx.profiles then out:write(string.format("%s backend: correctness at the test sizes only; no timing on %s\n", ctx.backend, ctx.backend)) end
  if vendor then
    for _, v in ipairs(vendor) do
      out:write(string.format("%s at %s: %s%s%s\n", w.vendor.name, v.label, v.verdict,
        v.median_ms and string.format(", %.4f ms, %.1f GFLOP/s, %.1f GB/s", v.median_ms, v.gflops, v.gbps)
        or (" (" .. tostring(v.message) .. ")"), v.detail and string.format(" (algorithm %d)", v.detail) or ""))
    end
  elseif verr and w.vendor then
    out:write(string.format("%s: not measured (%s)\n", w.vendor.name, verr.message))
  end
  out:write(string.format("%-26s %-9s %10s %9s %9s%s %8s %8s %5s %5s%s\n", "version", "verdict", "time ms",
    "GFLOP/s", "GB/s", w.rate and string.format(" %10s", w.rate.unit) or "", "%roof", "vs v0", "regs", "occ",
    has_vendor and "  %vendor" or ""))
end

-- The rows of the table t that belong to version index i.
local function print_rows(out, w, t, i)
  local function f(fmt, v) return v and string.format(fmt, v) or "-" end
  for _, r in ipairs(t.rows) do
    if r.index == i then
      local cells = string.format("%10s %9s %9s%s %8s %8s", f("%.4f", r.median_ms), f("%.1f", r.gflops), f("%.1f", r.gbps),
        w.rate and string.format(" %10s", f("%.3f", r.rate)) or "", f("%.1f", r.pct_of_roofline), f("%.2fx", r.vs_v0))
      local vendor_cell = t.has_vendor and r.pct_of_vendor and string.format("  %7.1f", r.pct_of_vendor) or ""
      if r.extra then
        out:write(string.format("  %-24s %-9s %s%s%s\n", r.size, r.verdict, cells, vendor_cell ~= "" and "            " or "", vendor_cell))
      else
        out:write(string.format("%-26s %-9s %s %5s %5s%s\n", r.version, r.verdict, cells, f("%d", r.registers),
          f("%.2f", r.occupancy), vendor_cell))
        if r.label ~= "bench" and r.median_ms then out:write(string.format("  (timed at %s)\n", r.size)) end
        if r.message then out:write(string.format("  %s\n", r.message)) end
      end
    end
  end
  out:flush()
end

-- The options, as args.parse takes them (tests/lua/cli_input_spec.lua
-- holds the help to them).
local FLAGS = { backend = "string", json = "boolean", journal = "string", resume = "string", budget = "number",
                max_seconds = "number" }

return {
  flags = FLAGS,
  summary = "run every lineage version of a workload through the gate and tabulate",
  usage = "usage: klineage bench WORKLOAD [--backend cuda|emu] [--json] [--journal DIR] [--resume RUN] [--budget N] [--max-seconds S]",
  help = [[
Evaluates each version of the workload's lineage with the gate (correctness
against v0 at every allowed size and three seeds, then CUPTI timing at the
bench size) and prints one row per version: time, GFLOP/s, GB/s, % of the
roofline bound from the device's measured ceilings, speedup over v0,
registers per thread and theoretical occupancy. Each row is printed as soon
as its version is judged. The last lines are "figure-name: value unit" for
scripts. WORKLOAD is a name under gpu/workloads or the path of a workload
folder.

Every evaluation is appended to the run's journal as it finishes. A bench
that was killed resumes with --resume RUN: versions already judged are read
back from the journal, not judged again. A lineage file that cannot be read
(missing, not a regular file, over 4 MiB, binary) is a row with the verdict
bad_input and the reason, journaled like any other.

On a terminal, stderr shows one line rewritten in place: the version being
judged, the fastest version so far with its time (on emu, which times
nothing, how many passed), the gate cycles used ("12/30" with --budget)
and the elapsed time. KLINEAGE_PROGRESS=1 shows it off a terminal too,
KLINEAGE_PROGRESS=0 never; the line is cut to $COLUMNS (else 100) columns.

At its end the bench writes the run's report, RUN/report.md and
RUN/report.html (see klineage report); a report that cannot be rendered is
said on stderr and changes nothing else.

Exit code: 0 when every version was judged (whatever its verdict), 1 when
the bench stopped early (the journal could not be written: the rows judged
so far are printed, and the journal keeps every record written before), 2
for bad input (the workload, an option, the runs folder).

options:
  --backend NAME     cuda (default where a GPU answers), emu, or fake (the
                     engine's own test backend)
  --json             print the records as JSON instead
  --journal DIR      the runs folder (default $KLINEAGE_RUNS, else
                     $XDG_STATE_HOME/klineage/runs, else
                     ~/.local/state/klineage/runs)
  --resume RUN       continue the run RUN (an id under the runs folder, or a
                     run folder's path)
  --budget N         gate cycles the run may spend (default: no limit)
  --max-seconds S    sampling cap per version (default 2)]],
  run = function(argv)
    local a = args.parse(argv, { flags = FLAGS, min = 1, max = 1 })
    local gate = require "klineage.gate"
    local files = require "klineage.base.files"
    local verdicts = require "klineage.base.verdicts"
    local host = require "kl.host"
    local w = require("klineage.cli").load_workload(a.positional[1])
    io.stderr:write(string.format("klineage bench: workload %s (%s)\n", require("klineage.base.term").text(w.name), files.display(w.path)))
    if not w.lineage or #w.lineage == 0 then args.usage_error("%s has no lineage", files.display(w.path)) end
    if a.budget then
      local ok, bf = require("klineage.device.context").check_budget(math.tointeger(a.budget) or a.budget)
      if not ok then args.usage_error("--budget: %s", bf.message) end
    end
    if a.max_seconds and not (a.max_seconds > 0) then args.usage_error("--max-seconds needs a positive number, got %s", a.max_seconds) end
    local ctx, code = require("klineage.cli").open_context("bench", { backend = a.backend, journal = a.journal,
      resume = a.resume, budget = a.budget and math.tointeger(a.budget), command = { "klineage", "bench", table.unpack(argv) },
      workloads = { w } })
    if not ctx then return code end
    local run_dir = ctx.run and ctx.run.dir
    -- The vendor's bar (cuBLAS for sgemm) and the ceilings, measured in
    -- this same run before the lineage, so the table's head is known
    -- before its first row.
    local vendor, verr
    if w.vendor and ctx.timed then vendor, verr = gate.vendor(ctx, w, { max_seconds = a.max_seconds }) end
    local device, ceilings = ctx.pool:device(1), ctx:ceilings()
    -- Later versions compile in child processes, one host core each, while
    -- the GPU judges the current one; the gate then finds them cached.
    local cache = require "klineage.device.cache"
    local candidates, texts, parent = {}, {}, nil
    for i, file in ipairs(w.lineage) do
      local path = w.dir .. "/" .. file
      texts[i] = files.read_text(path) -- nil: the gate reads it again and says why, in the row
      candidates[i] = { file = path, label = file, source = texts[i],
        provenance = { parent = parent, producer = { kind = "lineage", name = w.name, params = { version = i - 1 } } } }
      parent = texts[i] and require("kl.hash").sha256(texts[i]) or nil
    end
    local jobs, ahead = {}, math.max(1, host.cpu_count() - 1)
    local function spawn_upto(n)
      for k = 1, math.min(n, #w.lineage) do
        if not jobs[k] then
          jobs[k] = texts[k] and cache.spawn_compile(texts[k], { arch = ctx.arch, name = candidates[k].file }) or { result = true }
        end
      end
    end
    local line = require("klineage.cli.progress").line(io.stderr, ctx)
    local out = io.stdout
    local has_vendor = false
    for _, v in ipairs(vendor or {}) do has_vendor = has_vendor or v.median_ms ~= nil end
    if not a.json then print_header(out, w, ctx, ceilings, run_dir, device, vendor, verr, has_vendor) end
    -- Rows go out in lineage order as soon as every version before theirs
    -- is judged (several GPUs may finish out of order).
    local done, printed = {}, 0
    local function print_ready()
      if a.json then return end
      line:clear()
      local t
      while done[printed + 1] do
        printed = printed + 1
        t = t or require("klineage.report.lineage_table").build(w, done, vendor)
        print_rows(out, w, t, printed)
      end
    end
    local records, stop = verdicts.catch(gate.evaluate_all, ctx, candidates, w, {
      max_seconds = a.max_seconds,
      before = function(i)
        spawn_upto(i + ahead)
        cache.finish(jobs[i]) -- a failure shows again, with its message, in the gate's compile stage
        line:show(string.format("bench %s: %s (%d/%d) ...", w.name, w.lineage[i], i, #w.lineage), best_so_far(done, w.lineage))
      end,
      after = function(i, r)
        done[i] = r
        print_ready()
        line:show(string.format("bench %s: %s (%d/%d) %s%s", w.name, w.lineage[i], i, #w.lineage, r.verdict,
          r.reused and " (from the journal)" or ""), best_so_far(done, w.lineage))
      end,
    })
    line:done()
    ctx:close()
    if not records then
      -- The journal (or the folder of stored sources) could not be written:
      -- nothing judged after this point would be kept, so the bench stops.
      -- What was judged is shown, the version the failure interrupted
      -- included, and said to be missing from the journal.
      local lost = stop.record
      local lost_i
      for i, c in ipairs(candidates) do
        if lost and not done[i] and lost.candidate and lost.candidate.file == c.file then lost_i = i end
      end
      if lost_i then done[lost_i] = lost end
      local judged = 0
      for _ in pairs(done) do judged = judged + 1 end
      require("klineage.report").after_run("bench", run_dir)
      if a.json then
        local list = {}
        for i = 1, #w.lineage do list[#list + 1] = done[i] end
        print((require("klineage.base.stable_json").encode({ workload = w.name, run = run_dir, ceilings = ceilings, records = list,
          stopped = { verdict = stop.verdict, message = stop.message } }):gsub("\\/", "/")))
      else
        local t = require("klineage.report.lineage_table").build(w, done, vendor)
        for i = printed + 1, #w.lineage do
          if done[i] then print_rows(out, w, t, i) end
        end
      end
      io.stderr:write(string.format("klineage bench: stopped, %s: %s (%d of %d versions judged%s; the journal keeps "
        .. "every record written before%s)\n", stop.verdict, stop.message, judged, #w.lineage,
        lost_i and ", " .. w.lineage[lost_i] .. " not journaled" or "",
        run_dir and "; resume with --resume " .. files.display(run_dir) or ""))
      return exit_codes.of(stop)
    end
    -- The report before the last lines, which scripts read.
    require("klineage.report").after_run("bench", run_dir)
    if a.json then
      print((require("klineage.base.stable_json").encode({ workload = w.name, run = run_dir, ceilings = ceilings, records = records }):gsub("\\/", "/")))
      return exit_codes.of("ok") -- every version judged, whatever its verdict: each is a row
    end
    local t = require("klineage.report.lineage_table").build(w, records, vendor)
    for _, line in ipairs(require("klineage.report.lineage_table").figures(w, t)) do out:write(line, "\n") end
    return exit_codes.of("ok")
  end,
}
