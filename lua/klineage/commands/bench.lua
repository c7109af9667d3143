local args = require "klineage.args"

-- One line on a terminal, rewritten in place: what is judged, the cycles
-- used, the elapsed time. Nothing when stderr is not a terminal.
local function progress(tty, ctx, t0)
  if not tty then return function() end end
  local host = require "kl.host"
  return function(text)
    local b = ctx.budget
    local used = b.limit and string.format("%d/%d", b.used, b.limit) or tostring(b.used)
    io.stderr:write(string.format("\r\27[K%s  (cycles %s, %.0f s)", text, used, host.clock() - t0))
  end
end

local function print_table(out, w, t, ctx, ceilings, run_dir, device, vendor, verr)
  out:write(string.format("%s on %s (%s backend%s), run %s\n", w.name, device and device.name or "?", ctx.backend,
    ctx.why and "; " .. ctx.why or "", run_dir or "not journaled"))
  if ceilings then
    out:write(string.format("ceilings: copy %.0f GB/s, read %.0f GB/s, fp32 %.1f TFLOP/s%s\n",
      ceilings.copy_gbps, ceilings.read_gbps, ceilings.fp32_tflops, ceilings.cached and " (cached)" or ""))
  elseif ctx.backend == "cuda" then
    out:write("ceilings: not measured\n")
  end
  if ctx.backend == "emu" then out:write("emu backend: correctness at the test sizes only; no timing on emu\n") end
  if vendor then
    for _, v in ipairs(vendor) do
      out:write(string.format("%s at %s: %s%s%s\n", w.vendor.name, v.label, v.verdict,
        v.median_ms and string.format(", %.4f ms, %.1f GFLOP/s, %.1f GB/s", v.median_ms, v.gflops, v.gbps)
        or (" (" .. tostring(v.message) .. ")"), v.detail and string.format(" (algorithm %d)", v.detail) or ""))
    end
  elseif verr and w.vendor then
    out:write(string.format("%s: not measured (%s)\n", w.vendor.name, verr.message))
  end
  local function f(fmt, v) return v and string.format(fmt, v) or "-" end
  out:write(string.format("%-26s %-9s %10s %9s %9s%s %8s %8s %5s %5s%s\n", "version", "verdict", "time ms",
    "GFLOP/s", "GB/s", w.rate and string.format(" %10s", w.rate.unit) or "", "%roof", "vs v0", "regs", "occ",
    t.has_vendor and "  %vendor" or ""))
  for _, r in ipairs(t.rows) do
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
  for _, line in ipairs(require("klineage.lineage_table").figures(w, t)) do out:write(line, "\n") end
end

return {
  summary = "run every lineage version of a workload through the gate and tabulate",
  usage = "usage: klineage bench WORKLOAD [--backend cuda|emu] [--json] [--journal DIR] [--resume RUN] [--budget N] [--max-seconds S]",
  help = [[
Evaluates each version of the workload's lineage with the gate (correctness
against v0 at every allowed size and three seeds, then CUPTI timing at the
bench size) and prints one row per version: time, GFLOP/s, GB/s, % of the
roofline bound from the device's measured ceilings, speedup over v0,
registers per thread and theoretical occupancy. The last lines are
"figure-name: value unit" for scripts. WORKLOAD is a name under
gpu/workloads or the path of a workload folder.

Every evaluation is appended to the run's journal as it finishes. A bench
that was killed resumes with --resume RUN: versions already judged are read
back from the journal, not judged again.

options:
  --backend NAME     cuda (default where a GPU answers) or emu
  --json             print the records as JSON instead
  --journal DIR      the runs folder (default $KLINEAGE_RUNS, else
                     ~/.local/state/klineage/runs)
  --resume RUN       continue the run RUN (an id under the runs folder, or a
                     run folder's path)
  --budget N         gate cycles the run may spend (default: no limit)
  --max-seconds S    sampling cap per version (default 2)]],
  run = function(argv)
    local a = args.parse(argv, { flags = { backend = "string", json = "boolean", journal = "string",
      resume = "string", budget = "number", max_seconds = "number" }, min = 1, max = 1 })
    local workload = require "klineage.workload"
    local gate = require "klineage.gate"
    local host = require "kl.host"
    local w, err = workload.load(a.positional[1])
    if not w then args.usage_error("%s", err.message) end
    io.stderr:write(string.format("klineage bench: workload %s (%s)\n", w.name, w.path))
    if not w.lineage or #w.lineage == 0 then args.usage_error("%s has no lineage", w.path) end
    if a.budget and not math.tointeger(a.budget) then args.usage_error("--budget needs a whole number, got %s", a.budget) end
    local ctx, cerr = require("klineage.context").new { backend = a.backend, journal = a.journal, resume = a.resume,
      budget = a.budget and math.tointeger(a.budget), command = { "klineage", "bench", table.unpack(argv) },
      workloads = { w } }
    if not ctx then
      io.stderr:write("klineage bench: ", cerr.message, "\n")
      return cerr.verdict == "bad_input" and 2 or 1
    end
    local run_dir = ctx.run and ctx.run.dir
    -- The vendor's bar (cuBLAS for sgemm), measured in this same run.
    local vendor, verr
    if w.vendor and ctx.backend == "cuda" then vendor, verr = gate.vendor(ctx, w, { max_seconds = a.max_seconds }) end
    -- Later versions compile in child processes, one host core each, while
    -- the GPU judges the current one; the gate then finds them cached.
    local cache = require "klineage.cache"
    local files = require "klineage.files"
    local jobs, ahead = {}, math.max(1, host.cpu_count() - 1)
    local function spawn_upto(n)
      for k = 1, math.min(n, #w.lineage) do
        if not jobs[k] then
          local path = w.dir .. "/" .. w.lineage[k]
          local src = files.read_text(path)
          jobs[k] = src and cache.spawn_compile(src, { arch = ctx.arch, name = path }) or { result = true }
        end
      end
    end
    local candidates, parent = {}, nil
    for i, file in ipairs(w.lineage) do
      local path = w.dir .. "/" .. file
      local text = files.read_text(path)
      candidates[i] = { file = path, label = file,
        provenance = { parent = parent, producer = { kind = "lineage", name = w.name, params = { version = i - 1 } } } }
      parent = text and require("kl.hash").sha256(text) or nil
    end
    local show = progress(host.isatty(2), ctx, host.clock())
    local records = gate.evaluate_all(ctx, candidates, w, {
      max_seconds = a.max_seconds,
      before = function(i)
        spawn_upto(i + ahead)
        cache.finish(jobs[i]) -- a failure shows again, with its message, in the gate's compile stage
        show(string.format("[%d/%d] %s ...", i, #w.lineage, w.lineage[i]))
      end,
      after = function(i, r)
        show(string.format("[%d/%d] %s %s%s", i, #w.lineage, w.lineage[i], r.verdict, r.reused and " (from the journal)" or ""))
      end,
    })
    if host.isatty(2) then io.stderr:write("\r\27[K") end
    local device, ceilings = ctx.pool:device(1), ctx:ceilings()
    ctx:close()
    if a.json then
      print((require("cjson").encode({ workload = w.name, run = run_dir, ceilings = ceilings, records = records }):gsub("\\/", "/")))
      return 0
    end
    local t = require("klineage.lineage_table").build(w, records, vendor)
    print_table(io.stdout, w, t, ctx, ceilings, run_dir, device, vendor, verr)
    return 0
  end,
}
