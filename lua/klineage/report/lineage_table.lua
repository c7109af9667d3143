-- A lineage's bench table, computed from gate records alone, so that the
-- bench command and the reports show the same numbers.
--
--   lineage_table.build(w, records [, vendor_rows]) -> table
--     records[i] is version i's record; it may have holes (a bench that
--     stopped while several GPUs judged): a missing version has no row.
--     table = { rows = { row... }, has_vendor = bool, vendor = vendor_rows }
--     row = { index (of its record), version, verdict, label (the size's label), size (the params
--             that differ from the spec's bench size, or the label),
--             extra (true for a further bench size of the version above),
--             median_ms, ci_ms, gflops, gbps, rate, pct_of_roofline,
--             vs_v0, pct_of_vendor, registers, occupancy, message }
--     A ratio is taken only between runs at the same size label: v0's time
--     and the vendor's time where both exist.
--   lineage_table.figures(w, table) -> { "name: value unit", ... }
local M = {}

-- A size's name: the params that differ from the spec's bench size.
local function size_name(w, label, params)
  local keys = {}
  for k, v in pairs(params or {}) do
    -- a size read back from a journal has JSON's floats: 5000.0 is 5000
    if w.params[k] ~= v then keys[#keys + 1] = k .. "=" .. tostring(math.type(v) == "float" and math.tointeger(v) or v) end
  end
  table.sort(keys)
  return #keys > 0 and table.concat(keys, ",") or label
end

-- Every timed size of a record: the profile stage's and its further sizes.
local function timed_sizes(r)
  local p, out = (r.stages or {}).profile or {}, {}
  if p.median_ms then out[#out + 1] = { label = p.label or "bench", e = p } end
  for _, e in ipairs(p.sizes or {}) do out[#out + 1] = { label = e.label, e = e } end
  return out
end

local function ratio(num, den) return (num and den) and num / den or nil end

local function failure_message(r)
  local st = r.stages or {}
  for _, name in ipairs({ "profile", "correct", "reference", "compile" }) do
    if st[name] and st[name].message and st[name].verdict ~= "ok" and st[name].verdict ~= "skipped" then
      return st[name].message
    end
  end
  return r.message
end

function M.build(w, records, vendor_rows)
  local bar_at, v0_at = {}, {}
  for _, v in ipairs(vendor_rows or {}) do
    if v.median_ms then bar_at[v.label] = v.median_ms end
  end
  if records[1] then
    for _, t in ipairs(timed_sizes(records[1])) do v0_at[t.label] = t.e.median_ms end
  end
  local t = { rows = {}, has_vendor = next(bar_at) ~= nil, vendor = vendor_rows }
  local function row(version, r, label, e, extra)
    local of_vendor = ratio(bar_at[label], e.median_ms)
    return {
      version = version, verdict = extra and (e.verdict or "?") or r.verdict, label = label,
      size = size_name(w, label, e.params), extra = extra or nil,
      median_ms = e.median_ms, ci_ms = e.ci_ms, gflops = e.gflops, gbps = e.gbps, rate = e.rate,
      pct_of_roofline = e.pct_of_roofline, vs_v0 = ratio(v0_at[label], e.median_ms),
      pct_of_vendor = of_vendor and of_vendor * 100,
    }
  end
  local n = 0
  for i in pairs(records) do
    if math.type(i) == "integer" and i > n then n = i end
  end
  for i = 1, n do
    local r = records[i]
    if r then
      local version = (w.lineage and w.lineage[i]) or (r.candidate and r.candidate.label) or tostring(i)
      local p, c = (r.stages or {}).profile or {}, (r.stages or {}).compile or {}
      local main = row(version, r, p.label or "bench", p)
      local fn = c.functions and c.functions[w.kernel]
      main.index, main.registers, main.occupancy = i, fn and fn.registers, c.occupancy
      if r.verdict ~= "ok" then main.message = failure_message(r) end
      t.rows[#t.rows + 1] = main
      for _, e in ipairs(p.sizes or {}) do
        local extra = row(version, r, e.label, e, true)
        extra.index = i
        t.rows[#t.rows + 1] = extra
      end
    end
  end
  return t
end

function M.figures(w, t)
  local out, last = {}, nil
  for _, r in ipairs(t.rows) do
    if not r.extra and r.median_ms then
      out[#out + 1] = string.format("%s-%s-time: %.4f ms", w.name, (r.version:gsub("%.cu$", "")), r.median_ms)
      last = r
    end
  end
  if last and w.lineage and last.version == w.lineage[#w.lineage] then
    if last.pct_of_vendor then out[#out + 1] = string.format("%s-expert-pct-of-vendor: %.1f %%", w.name, last.pct_of_vendor) end
    if last.pct_of_roofline then out[#out + 1] = string.format("%s-expert-pct-of-roofline: %.1f %%", w.name, last.pct_of_roofline) end
    if last.rate then out[#out + 1] = string.format("%s-expert-rate: %.3f %s", w.name, last.rate, w.rate.unit) end
    if last.vs_v0 then out[#out + 1] = string.format("%s-expert-speedup-over-v0: %.2f x", w.name, last.vs_v0) end
  end
  return out
end

return M
