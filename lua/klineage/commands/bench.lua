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
    local candidates = {}
    for i, file in ipairs(w.lineage) do candidates[i] = { file = w.dir .. "/" .. file, label = file } end
    -- One worker per visible GPU, each taking the next version as it
    -- finishes one. On emu the bench sizes would take hours on a CPU and
    -- there is no timing anyway: correctness at the test sizes is what it
    -- can judge.
    local records = gate.evaluate_all(candidates, w, {
      pool = pool, journal = j, ceilings = ceilings, max_seconds = a.max_seconds,
      sizes = backend == "emu" and "test" or nil,
      before = function(i)
        spawn_upto(i + ahead)
        cache.finish(jobs[i]) -- a failure shows again, with its message, in the gate's compile stage
        if tty then io.stderr:write(string.format("\r\27[K[%d/%d] %s ...", i, #w.lineage, w.lineage[i])) end
      end,
    })
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
    -- The vendor's and v0's times by size label: a ratio is only taken
    -- between runs at the same size.
    local bar_at, v0_at = {}, {}
    if vendor then
      for _, v in ipairs(vendor) do
        out:write(string.format("%s at %s: %s%s%s\n", w.vendor.name, v.label, v.verdict,
          v.median_ms and string.format(", %.4f ms, %.1f GFLOP/s, %.1f GB/s", v.median_ms, v.gflops, v.gbps)
          or (" (" .. tostring(v.message) .. ")"), v.detail and string.format(" (algorithm %d)", v.detail) or ""))
        if v.median_ms then bar_at[v.label] = v.median_ms end
      end
    elseif verr and w.vendor then
      out:write(string.format("%s: not measured (%s)\n", w.vendor.name, verr))
    end
    local has_bar = next(bar_at) ~= nil
    local function each_size(r, fn)
      local p = r.stages.profile or {}
      if p.median_ms then fn(p.label or "bench", p) end
      for _, e in ipairs(p.sizes or {}) do fn(e.label, e) end
    end
    if records[1] then each_size(records[1], function(label, e) v0_at[label] = e.median_ms end) end
    local function ratio(num, den) return (num and den) and num / den or nil end
    local function cells(label, e)
      local rate = w.rate and (e.rate and string.format(" %10.3f", e.rate) or string.format(" %10s", "-")) or ""
      local vs0 = ratio(v0_at[label], e.median_ms)
      local pct = has_bar and ratio(bar_at[label], e.median_ms)
      return string.format("%10s %9s %9s%s %8s %8s",
        e.median_ms and string.format("%.4f", e.median_ms) or "-",
        e.gflops and string.format("%.1f", e.gflops) or "-", e.gbps and string.format("%.1f", e.gbps) or "-", rate,
        e.pct_of_roofline and string.format("%.1f", e.pct_of_roofline) or "-",
        vs0 and string.format("%.2fx", vs0) or "-"), pct and string.format("  %7.1f", pct * 100) or ""
    end
    out:write(string.format("%-26s %-9s %10s %9s %9s%s %8s %8s %5s %5s%s\n", "version", "verdict", "time ms",
      "GFLOP/s", "GB/s", w.rate and string.format(" %10s", w.rate.unit) or "", "%roof", "vs v0", "regs", "occ",
      has_bar and "  %vendor" or ""))
    -- A size's label in the table: the params that differ from the spec's.
    local function size_name(label, params)
      local keys = {}
      for k, v in pairs(params or {}) do
        if w.params[k] ~= v then keys[#keys + 1] = k .. "=" .. tostring(v) end
      end
      table.sort(keys)
      return #keys > 0 and table.concat(keys, ",") or label
    end
    local figures = {}
    for i, r in ipairs(records) do
      local p, c = r.stages.profile or {}, r.stages.compile or {}
      local fn = c.functions and c.functions[w.kernel]
      local main, vendor_pct = cells(p.label or "bench", p)
      out:write(string.format("%-26s %-9s %s %5s %5s%s\n", w.lineage[i], r.verdict, main,
        fn and tostring(fn.registers) or "-", c.occupancy and string.format("%.2f", c.occupancy) or "-", vendor_pct))
      if p.label and p.label ~= "bench" then out:write(string.format("  (timed at %s)\n", size_name(p.label, p.params))) end
      for _, e in ipairs(p.sizes or {}) do
        local row, pct = cells(e.label, e)
        out:write(string.format("  %-24s %-9s %s%s%s\n", size_name(e.label, e.params), e.verdict or "?", row,
          pct ~= "" and "            " or "", pct))
      end
      if r.verdict ~= "ok" then
        local st = r.stages.correct or r.stages.compile or {}
        out:write(string.format("  %s\n", (r.stages.profile or {}).message or st.message or ""))
      end
      if p.median_ms then figures[#figures + 1] = { w.lineage[i], p } end
    end
    for _, f in ipairs(figures) do
      local name = f[1]:gsub("%.cu$", "")
      out:write(string.format("%s-%s-time: %.4f ms\n", w.name, name, f[2].median_ms))
    end
    local last = figures[#figures]
    if last and last[1] == w.lineage[#w.lineage] then
      local e, label = last[2], last[2].label or "bench"
      local pct, vs0 = ratio(bar_at[label], e.median_ms), ratio(v0_at[label], e.median_ms)
      if pct then out:write(string.format("%s-expert-pct-of-vendor: %.1f %%\n", w.name, pct * 100)) end
      if e.pct_of_roofline then out:write(string.format("%s-expert-pct-of-roofline: %.1f %%\n", w.name, e.pct_of_roofline)) end
      if e.rate then out:write(string.format("%s-expert-rate: %.3f %s\n", w.name, e.rate, w.rate.unit)) end
      if vs0 then out:write(string.format("%s-expert-speedup-over-v0: %.2f x\n", w.name, vs0)) end
    end
    return 0
  end,
}
