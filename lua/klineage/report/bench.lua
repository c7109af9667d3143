-- The bench report: the lineage table as `klineage bench` prints it (the
-- same numbers, from klineage.report.lineage_table), a chart of the time per
-- version with its confidence interval and the vendor's bar, a chart of
-- the % of roofline, and why each failed version failed.
--
--   bench.build(run) -> doc, title     (the kind contract: report/init.lua)
--
-- The workload comes from the journal: its versions in the order the bench
-- judged them (each evaluation's lineage index), its name and kernel from
-- the records. The spec (at the run record's path, else by its name in
-- the home) gives the entry kernel,
-- the bench size, the rate's unit and the vendor's name when it still
-- loads; the report says when it has changed since the run.
local common = require "klineage.report.common"
local escape = require "klineage.report.escape"
local lineage_table = require "klineage.report.lineage_table"
local svg = require "klineage.report.svg"

local M = {}

local md = escape.md

-- The spec as the journal knows it, filled in from the home's spec.
local function workload_of(run, evaluations)
  local w = { name = run.workload or "?", lineage = {}, params = {} }
  for i, r in ipairs(evaluations) do w.lineage[i] = r.candidate and r.candidate.label or tostring(i) end
  local journaled_spec = run.first.specs and run.first.specs[1] or {}
  local refs, spec = {}, nil
  if type(journaled_spec.path) == "string" then refs[#refs + 1] = journaled_spec.path end
  refs[#refs + 1] = w.name
  for _, ref in ipairs(refs) do
    if not spec then
      local ok, loaded = pcall(require("klineage.workload").load, ref)
      spec = ok and loaded or nil
    end
  end
  local note
  if spec then
    w.kernel, w.rate, w.vendor, w.params = spec.kernel, spec.rate, spec.vendor, spec.params
    local journaled = run.first.specs and run.first.specs[1] and run.first.specs[1].sha256
    if journaled and spec.sha256 and journaled ~= spec.sha256 then
      note = "The workload's spec has changed since this run: its entry kernel, bench size and units are today's."
    end
  else
    note = "The workload's spec does not load here: sizes are shown in full and registers only for a single kernel."
    local p = evaluations[1] and evaluations[1].stages and evaluations[1].stages.profile
    w.params = p and p.params or {}
  end
  -- a rate in the records with no spec to name its unit
  for _, r in ipairs(evaluations) do
    local p = r.stages and r.stages.profile
    if not w.rate and p and p.rate then w.rate = { unit = "rate" } end
  end
  if not w.kernel then
    for _, r in ipairs(evaluations) do
      local fns = r.stages and r.stages.compile and r.stages.compile.functions
      local names = {}
      for k in pairs(fns or {}) do names[#names + 1] = k end
      if #names == 1 then w.kernel = names[1] break end
    end
  end
  return w, note
end

-- Version i's record: the last evaluation of each lineage index (a resumed
-- bench reads the judged ones back and journals them no second time).
local function evaluations_of(run)
  local by, order = {}, {}
  for _, r in ipairs(run.records) do
    if r.kind == "evaluation" then
      local p = r.provenance and r.provenance.producer
      local v = p and p.kind == "lineage" and p.params and math.tointeger(p.params.version)
      local slot = v and (v + 1) or (#order + 1)
      if not by[slot] then order[#order + 1] = slot end
      by[slot] = r
    end
  end
  table.sort(order)
  local list = {}
  for i, slot in ipairs(order) do list[i] = by[slot] end
  return list
end

local function vendor_rows(run)
  local rows
  for _, r in ipairs(run.records) do
    if r.kind == "vendor" then rows = r.rows end
  end
  return rows
end

local function f(fmt, v) return v and string.format(fmt, v) or "-" end

local function ci_text(ci)
  if type(ci) ~= "table" or not ci[1] then return "-" end
  return string.format("%.4f–%.4f", ci[1], ci[2])
end

local function table_md(w, t)
  local heads = { "version", "size", "verdict", "time ms", "95% interval ms", "GFLOP/s", "GB/s" }
  local align = { "---", "---", "---", "--:", "--:", "--:", "--:" }
  if w.rate then heads[#heads + 1] = md(w.rate.unit); align[#align + 1] = "--:" end
  for _, h in ipairs({ "% roofline", "vs v0", "regs", "occupancy" }) do heads[#heads + 1] = h; align[#align + 1] = "--:" end
  if t.has_vendor then heads[#heads + 1] = "% vendor"; align[#align + 1] = "--:" end
  local lines = { "| " .. table.concat(heads, " | ") .. " |", "|" .. table.concat(align, "|") .. "|" }
  for _, r in ipairs(t.rows) do
    local cells = { r.extra and "" or escape.code(r.version, true), md(r.size or ""), md(r.verdict or "?"), f("%.4f", r.median_ms),
      ci_text(r.ci_ms), f("%.1f", r.gflops), f("%.1f", r.gbps) }
    if w.rate then cells[#cells + 1] = f("%.3f", r.rate) end
    cells[#cells + 1] = f("%.1f", r.pct_of_roofline)
    cells[#cells + 1] = f("%.2fx", r.vs_v0)
    cells[#cells + 1] = r.extra and "" or f("%d", math.tointeger(r.registers) or r.registers)
    cells[#cells + 1] = r.extra and "" or f("%.2f", r.occupancy)
    if t.has_vendor then cells[#cells + 1] = f("%.1f", r.pct_of_vendor) end
    lines[#lines + 1] = "| " .. table.concat(cells, " | ") .. " |"
  end
  return table.concat(lines, "\n")
end

local function charts(d, w, t, backend)
  local bars, roof, vendor_ms = {}, {}, nil
  local timed, has_roof = false, false
  for _, r in ipairs(t.rows) do
    if not r.extra then
      local ci = type(r.ci_ms) == "table" and r.ci_ms or {}
      bars[#bars + 1] = { label = r.version, value = r.median_ms, low = ci[1], high = ci[2] }
      roof[#roof + 1] = { label = r.version, value = r.pct_of_roofline }
      timed = timed or r.median_ms ~= nil
      has_roof = has_roof or r.pct_of_roofline ~= nil
    end
  end
  for _, v in ipairs(t.vendor or {}) do
    if v.label == "bench" and v.median_ms then vendor_ms = v.median_ms end
  end
  if not timed then
    d:md(string.format("No chart: no version was timed (%s).",
      common.times_nothing(backend) and ("the " .. backend .. " backend checks correctness only and times nothing") or "every version failed before timing"))
    return
  end
  local vendor_name = w.vendor and w.vendor.name or "vendor"
  d:raw(svg.bar_chart({ id = "chart-time", title = "Time per version at the bench size (lower is faster)", unit = "ms", log = true,
    bars = bars, reference = vendor_ms and { value = vendor_ms, label = vendor_name } or nil }),
    "*Chart in report.html: the time per version (the table's time and interval columns).*")
  if has_roof then
    d:raw(svg.bar_chart({ id = "chart-roofline", title = "% of the roofline bound per version (higher is closer)", unit = "%",
      bars = roof, reference = { value = 100, label = "roofline" } }),
      "*Chart in report.html: % of the roofline bound per version.*")
  end
end

function M.build(run)
  local d = require("klineage.report.doc").new()
  local evaluations = evaluations_of(run)
  local w, note = workload_of(run, evaluations)
  local title = string.format("Bench: %s", w.name)
  d:md("# " .. md(title))
  d:md(common.run_facts(run))
  if note then d:md("> " .. md(note)) end
  local backend = run.first.backend
  if common.times_nothing(backend) then d:md("The " .. backend .. " backend checks correctness at the test sizes only and times nothing: the time columns are empty.") end
  local ceilings = evaluations[1] and evaluations[1].ceilings
  if ceilings then
    d:md(string.format("Ceilings, measured on %s: copy %.0f GB/s, read %.0f GB/s, fp32 %.1f TFLOP/s.", md(ceilings.device or "the device"),
      ceilings.copy_gbps or 0, ceilings.read_gbps or 0, ceilings.fp32_tflops or 0))
  end
  local vendor = vendor_rows(run)
  if vendor then
    local lines = { "## The vendor's bar", "", "| size | verdict | time ms | GFLOP/s | GB/s |", "|---|---|--:|--:|--:|" }
    for _, v in ipairs(vendor) do
      lines[#lines + 1] = string.format("| %s | %s | %s | %s | %s |", md(v.label or "?"), md(v.verdict or "?"), f("%.4f", v.median_ms),
        f("%.1f", v.gflops), f("%.1f", v.gbps))
    end
    d:md(table.concat(lines, "\n"))
  end
  if #evaluations == 0 then
    d:md("No version was judged in this run.")
    return d, title
  end
  local t = lineage_table.build(w, evaluations, vendor)
  d:md("## The lineage\n\nOne row per version (a further row per extra bench size), as `klineage bench` prints it. Times are the gate's medians of "
    .. "kernel durations on the run's backend, with their 95% confidence interval; % roofline is against the compulsory bytes at the measured peak "
    .. "bandwidth; vs v0 is v0's time over the version's, at the same size.")
  d:md(table_md(w, t))
  charts(d, w, t, backend)
  local failures = {}
  for _, r in ipairs(t.rows) do
    if r.message then failures[#failures + 1] = string.format("- %s: %s: %s", escape.code(r.version), md(r.verdict), md(r.message)) end
  end
  if #failures > 0 then d:md("## Why versions failed\n\n" .. table.concat(failures, "\n")) end
  local figures = lineage_table.figures(w, t)
  if #figures > 0 then d:md("## Figures\n\n" .. escape.code_block(table.concat(figures, "\n"), "text")) end
  return d, title
end

return M
