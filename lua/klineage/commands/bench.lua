local args = require "klineage.args"

return {
  summary = "run every lineage version of a workload through the gate and tabulate",
  usage = "usage: klineage bench WORKLOAD [--backend cuda|emu] [--json] [--journal DIR] [--max-seconds S]",
  help = [[
Evaluates each version of the workload's lineage with the gate (correctness
against v0 at every allowed size and three seeds, then CUPTI timing at the
bench size) and prints one row per version: time, GFLOP/s, GB/s, % of the
roofline bound from the device's measured ceilings, speedup over v0,
registers per thread and theoretical occupancy. The last lines are
"figure-name: value unit" for scripts.

options:
  --backend NAME     cuda (default where a GPU answers) or emu
  --json             print the records as JSON instead
  --journal DIR      where the run's journal goes (default runs/)
  --max-seconds S    sampling cap per version (default 2)]],
  run = function(argv)
    local a = args.parse(argv, { flags = { backend = "string", json = "boolean", journal = "string",
      max_seconds = "number" }, min = 1, max = 1 })
    local workload = require "klineage.workload"
    local gate = require "klineage.gate"
    local journal = require "klineage.journal"
    local host = require "kl.host"
    local w, err = workload.load(a.positional[1])
    if not w then args.usage_error("%s", err) end
    if not w.lineage or #w.lineage == 0 then args.usage_error("%s has no lineage", w.path) end
    local pool, backend, why = require("klineage.backends").pool(a.backend)
    if not pool then io.stderr:write("klineage bench: ", backend, "\n") return 1 end
    local ceilings, cerr
    if backend == "cuda" then ceilings, cerr = require("klineage.ceilings").get(pool) end
    -- The vendor's bar (cuBLAS for sgemm), measured in this same run.
    local vendor, verr
    if w.vendor and backend == "cuda" then vendor, verr = gate.vendor(w, { pool = pool, max_seconds = a.max_seconds }) end
    local run_id = journal.new_run_id()
    local j = assert(journal.open(journal.path(a.journal or "runs", run_id)))
    local tty = host.isatty(2)
    local records = {}
    -- Later versions compile in child processes, one host core each, while
    -- the GPU judges the current one; the gate then finds them cached.
    local cache = require "klineage.cache"
    local files = require "klineage.files"
    local dev = pool:device(1)
    local arch = dev and type(dev.arch) == "string" and dev.arch:match("^sm_%d+$") or "sm_90"
    local jobs, ahead = {}, math.max(1, host.cpu_count() - 1)
    local function spawn_upto(n)
      for k = 1, math.min(n, #w.lineage) do
        if not jobs[k] then
          local path = w.dir .. "/" .. w.lineage[k]
          local src = files.read_text(path)
          jobs[k] = src and cache.spawn_compile(src, { arch = arch, name = path }) or { failed = {} }
        end
      end
    end
    for i, file in ipairs(w.lineage) do
      spawn_upto(i + ahead)
      cache.finish(jobs[i]) -- a failure shows again, with its message, in the gate's compile stage
      if tty then io.stderr:write(string.format("\r[%d/%d] %s ...", i, #w.lineage, file)) end
      -- On emu the bench sizes would take hours on a CPU and there is no
      -- timing anyway: correctness at the test sizes is what it can judge.
      records[i] = gate.evaluate({ file = w.dir .. "/" .. file, label = file }, w,
        { pool = pool, journal = j, ceilings = ceilings, max_seconds = a.max_seconds,
          sizes = backend == "emu" and "test" or nil })
    end
    if tty then io.stderr:write("\r\27[K") end
    j:close()
    local device = pool:device(1)
    pool:close()
    if a.json then
      print((require("cjson").encode({ workload = w.name, ceilings = ceilings, records = records }):gsub("\\/", "/")))
      return 0
    end
    local out = io.stdout
    out:write(string.format("%s on %s (%s backend%s), run %s\n", w.name, device and device.name or "?", backend,
      why and "; " .. why or "", run_id))
    if ceilings then
      out:write(string.format("ceilings: copy %.0f GB/s, read %.0f GB/s, fp32 %.1f TFLOP/s%s\n",
        ceilings.copy_gbps, ceilings.read_gbps, ceilings.fp32_tflops, ceilings.cached and " (cached)" or ""))
    elseif cerr then
      out:write("ceilings: not measured (" .. cerr .. ")\n")
    end
    if backend == "emu" then
      out:write("emu backend: correctness at the test sizes only; no timing on emu\n")
    end
    local bar = vendor and vendor[1] and vendor[1].median_ms and vendor[1]
    if vendor then
      for _, v in ipairs(vendor) do
        out:write(string.format("%s at %s: %s%s\n", w.vendor.name, v.label, v.verdict,
          v.median_ms and string.format(", %.4f ms, %.1f GFLOP/s, %.1f GB/s", v.median_ms, v.gflops, v.gbps)
          or (" (" .. tostring(v.message) .. ")")))
      end
    elseif verr and w.vendor then
      out:write(string.format("%s: not measured (%s)\n", w.vendor.name, verr))
    end
    out:write(string.format("%-26s %-9s %10s %9s %9s %8s %8s %5s %5s%s\n", "version", "verdict", "time ms",
      "GFLOP/s", "GB/s", "%roof", "vs v0", "regs", "occ", bar and "  %vendor" or ""))
    local t0
    local figures = {}
    for i, r in ipairs(records) do
      local p, c = r.stages.profile or {}, r.stages.compile or {}
      local fn = c.functions and c.functions[w.kernel]
      if i == 1 then t0 = p.median_ms end
      out:write(string.format("%-26s %-9s %10s %9s %9s %8s %8s %5s %5s%s\n", w.lineage[i], r.verdict,
        p.median_ms and string.format("%.4f", p.median_ms) or "-",
        p.gflops and string.format("%.1f", p.gflops) or "-", p.gbps and string.format("%.1f", p.gbps) or "-",
        p.pct_of_roofline and string.format("%.1f", p.pct_of_roofline) or "-",
        (t0 and p.median_ms) and string.format("%.2fx", t0 / p.median_ms) or "-",
        fn and tostring(fn.registers) or "-", c.occupancy and string.format("%.2f", c.occupancy) or "-",
        (bar and p.median_ms) and string.format("  %7.1f", bar.median_ms / p.median_ms * 100) or ""))
      for _, e in ipairs(p.sizes or {}) do
        local keys = {}
        for k, v in pairs(e.params) do
          if w.params[k] ~= v then keys[#keys + 1] = k .. "=" .. tostring(v) end
        end
        table.sort(keys)
        out:write(string.format("  %-24s %-9s %10s %9s %9s %8s\n", table.concat(keys, ","), e.verdict or "?",
          e.median_ms and string.format("%.4f", e.median_ms) or "-", e.gflops and string.format("%.1f", e.gflops) or "-",
          e.gbps and string.format("%.1f", e.gbps) or "-", e.pct_of_roofline and string.format("%.1f", e.pct_of_roofline) or "-"))
      end
      if r.verdict ~= "ok" then
        local s = r.stages.correct or r.stages.compile or {}
        out:write(string.format("  %s\n", (r.stages.profile or {}).message or s.message or ""))
      end
      if p.median_ms then figures[#figures + 1] = { w.lineage[i], p } end
    end
    for _, f in ipairs(figures) do
      local name = f[1]:gsub("%.cu$", "")
      out:write(string.format("%s-%s-time: %.4f ms\n", w.name, name, f[2].median_ms))
    end
    local last = figures[#figures]
    if last and last[1] == w.lineage[#w.lineage] then
      if bar then out:write(string.format("%s-expert-pct-of-vendor: %.1f %%\n", w.name, bar.median_ms / last[2].median_ms * 100)) end
      if last[2].pct_of_roofline then out:write(string.format("%s-expert-pct-of-roofline: %.1f %%\n", w.name, last[2].pct_of_roofline)) end
      if t0 then out:write(string.format("%s-expert-speedup-over-v0: %.2f x\n", w.name, t0 / last[2].median_ms)) end
    end
    return 0
  end,
}
