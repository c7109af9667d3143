-- Probes: skills applied forward where the walks never judged them, so that
-- a guard can come from a measured failure in another context and not only
-- from the walk's own simplifications. Two kinds of unit, per workload:
--   forward  a transform applied at its first apply site in a lineage
--            version (default params). The version is T and the result F:
--            F is gated like a walk candidate (against the lineage's first
--            version and the C reference) and, when it passes on a backend
--            that times, timed against T by the interleaved compare.
--   size     a recorded step of the lineage (version k-1 to k, as a
--            recorded walk explained it) timed by the interleaved compare
--            at each bench size the walks did not time (bench_params):
--            the walks timed every step at the bench size only.
-- Every judged unit is journaled as a "probe" record, which
-- klineage.skills.extract reads as an observation (evidence.kind "probe"):
--   { kind = "probe", key, probe = "forward" | "size", from (F's sha256),
--     to (T's), labels = { from, to }, producer (the walk_step's shape:
--     { kind = "transform", name, edit, params } | { kind = "recorded" }),
--     explained (size: the recorded walk's explanation), size (the size's
--     label), params (size: merged over w.params), verdict, effect, source }
-- Resumable: a unit whose record is in the journal is not judged again,
-- and the gate and the compare reuse their own journaled judgements.
--
--   probe.plan(w [, opts]) -> units, in a fixed order
--     opts = { kinds = { forward = bool, size = bool } (default both),
--              steps = { walk_step record... } the recorded steps of w to
--              time at other sizes (probe.recorded_steps reads them) }
--   probe.recorded_steps(dirs, name) -> the walk_step records of recorded
--       walks of workload `name` in the run folders dirs
--   probe.run(ctx, w, units [, opts]) -> summary
--     opts = { deadline = a host.clock() time: no unit starts after it,
--              progress = fn(unit, index, of) }
--     summary = { judged, reused, not_run = { unit... (with why) }, stopped }
local aliasing = require "klineage.transforms.lib.aliasing"
local cache = require "klineage.device.cache"
local files = require "klineage.base.files"
local gate = require "klineage.gate"
local journal = require "klineage.store.journal"
local runs = require "klineage.store.runs"
local transforms = require "klineage.transforms"
local workload = require "klineage.workload"
local hash = require "kl.hash"
local host = require "kl.host"

local M = {}

M.BATCH = 8 -- forward units gated together (compiles run ahead), between deadline checks

local function version_text(w, i) return assert(files.read_text(w.dir .. "/" .. w.lineage[i])) end

function M.recorded_steps(dirs, name)
  local out, seen = {}, {}
  for _, dir in ipairs(dirs) do
    local records = journal.read(dir .. "/journal.jsonl") or {}
    local ours = false
    for _, r in ipairs(records) do
      if r.kind == "run" and r.specs and r.specs[1] then ours = r.specs[1].name == name end
      local p = r.producer
      if ours and r.kind == "walk_step" and p and p.kind == "recorded" and not seen[r.from .. r.to] then
        seen[r.from .. r.to] = true
        out[#out + 1] = r
      end
    end
  end
  return out
end

local function forward_units(w)
  local units = {}
  for i, file in ipairs(w.lineage) do
    local text = version_text(w, i)
    local first = {}
    for _, site in ipairs(transforms.sites(text, { direction = "apply", fn = w.kernel, facts = aliasing.facts(w) })) do
      if not first[site.transform] then
        first[site.transform] = true
        units[#units + 1] = { probe = "forward", version = i, label = file, site = site }
      end
    end
  end
  return units
end

-- "bench 2 (M=1024, N=1024, K=1024)": the sizes that differ from the bench's.
local function size_label(w, size)
  local names = {}
  for k, v in pairs(size.params) do
    if w.params[k] ~= v then names[#names + 1] = k end
  end
  table.sort(names)
  for i, k in ipairs(names) do names[i] = k .. "=" .. tostring(size.params[k]) end
  return size.label .. " (" .. table.concat(names, ", ") .. ")"
end

local function size_units(w, steps)
  local units = {}
  local by_sha = {}
  for i = 1, #w.lineage do by_sha[hash.sha256(version_text(w, i))] = i end
  for _, r in ipairs(steps) do
    local f, t = by_sha[r.from], by_sha[r.to]
    if f and t then
      for _, size in ipairs(workload.sizes(w)) do
        if size.bench and size.label ~= "bench" then
          units[#units + 1] = { probe = "size", from = f, to = t, size = size, step = r, label = w.lineage[t],
                                size_label = size_label(w, size) }
        end
      end
    end
  end
  table.sort(units, function(a, b)
    if a.from ~= b.from then return a.from < b.from end
    return a.size.label < b.size.label
  end)
  return units
end

function M.plan(w, opts)
  opts = opts or {}
  local kinds = opts.kinds or { forward = true, size = true }
  local units = {}
  if kinds.forward then
    local list = forward_units(w)
    table.move(list, 1, #list, #units + 1, units)
  end
  if kinds.size then
    local list = size_units(w, opts.steps or {})
    table.move(list, 1, #list, #units + 1, units)
  end
  return units
end

local function key_of(w, u, from_sha, to_sha)
  return runs.key { probe = u.probe, workload = w.sha256, from = from_sha, to = to_sha, params = u.size and u.size.params }
end

local function as_candidate(w, text, label, parent, producer)
  return { source = text, label = label, kernel = w.kernel, file = w.dir .. "/" .. label,
           provenance = { parent = parent, producer = producer } }
end

local function effect_of(ctx, w, t, f, params)
  if not ctx.timed then
    return { measured = false, why = "not measured: the " .. ctx.backend .. " backend times nothing" }
  end
  local c, cf = gate.compare(ctx, t, f, w, { params = params, provenance = f.provenance })
  if not c then return { measured = false, why = "the compare failed: " .. tostring(cf) }, cf end
  return { measured = true, speedup = c.speedup, ci = c.ci, outcome = c.outcome }
end

local function journal_probe(ctx, w, u, key, t, f, fields)
  fields.kind, fields.key, fields.probe = "probe", key, u.probe
  fields.workload = w.name
  fields.from, fields.to = hash.sha256(f.source), hash.sha256(t.source)
  fields.labels = { from = f.label, to = t.label }
  fields.source = ctx:store_source(f.source)
  ctx:record(fields)
end

-- The forward units of one batch: apply, gate together, time the passing.
local function run_forward(ctx, w, batch, summary)
  local base = { file = w.dir .. "/" .. w.lineage[1] }
  local pending, candidates = {}, {}
  for _, u in ipairs(batch) do
    local ttext = version_text(w, u.version)
    local text, af = transforms.run(u.site)
    if not text or text == ttext then
      u.why = af and af.message or "the transform changed nothing"
      summary.not_run[#summary.not_run + 1] = u
    else
      local producer = { kind = "transform", name = u.site.transform, edit = u.site.key, params = u.site.params, direction = "apply" }
      local t = as_candidate(w, ttext, u.label, nil, { kind = "lineage" })
      local f = as_candidate(w, text, string.format("%s + %s %s", u.label, u.site.transform, u.site.key), hash.sha256(ttext), producer)
      u.key = key_of(w, u, hash.sha256(text), hash.sha256(ttext))
      if ctx:judged(u.key) then
        summary.reused = summary.reused + 1
      else
        pending[#pending + 1] = { u = u, t = t, f = f, producer = producer }
        candidates[#candidates + 1] = f
      end
    end
  end
  if #candidates == 0 then return end
  local records = gate.evaluate_all(ctx, candidates, w, { profile = ctx.timed, baseline = base,
                                                          before = cache.compile_ahead(candidates, ctx.arch) })
  for i, p in ipairs(pending) do
    local r = records[i]
    if r.verdict == "budget_exhausted" then return "budget_exhausted" end
    local effect, cf = nil, nil
    if r.verdict == "ok" then
      effect, cf = effect_of(ctx, w, p.t, p.f)
      if cf and cf.verdict == "budget_exhausted" then return "budget_exhausted" end
    end
    journal_probe(ctx, w, p.u, p.u.key, p.t, p.f, { producer = p.producer, verdict = r.verdict, effect = effect,
                                                    site = { key = p.u.site.key, check = p.u.site.check, line = p.u.site.line } })
    summary.judged = summary.judged + 1
  end
end

local function run_size(ctx, w, u, summary)
  if not ctx.timed then
    u.why = "a size probe is a compare, and the " .. ctx.backend .. " backend times nothing"
    summary.not_run[#summary.not_run + 1] = u
    return
  end
  local t = as_candidate(w, version_text(w, u.to), w.lineage[u.to], nil, { kind = "lineage" })
  local f = as_candidate(w, version_text(w, u.from), w.lineage[u.from], hash.sha256(t.source), { kind = "recorded", name = w.lineage[u.from] })
  local key = key_of(w, u, hash.sha256(f.source), hash.sha256(t.source))
  if ctx:judged(key) then summary.reused = summary.reused + 1 return end
  local params = {}
  for k, v in pairs(u.size.params) do params[k] = v end
  local effect, cf = effect_of(ctx, w, t, f, params)
  if cf and cf.verdict == "budget_exhausted" then return "budget_exhausted" end
  if cf and cf.verdict == "not_allowed" then
    u.why = cf.message
    summary.not_run[#summary.not_run + 1] = u
    return
  end
  journal_probe(ctx, w, u, key, t, f, { producer = f.provenance.producer, explained = u.step.explained, verdict = "ok",
                                        effect = effect, size = u.size_label, params = params })
  summary.judged = summary.judged + 1
end

function M.run(ctx, w, units, opts)
  gate.check_context(ctx, "probe.run")
  opts = opts or {}
  local summary = { judged = 0, reused = 0, not_run = {}, stopped = "done", workload = w.name }
  local function late() return opts.deadline and host.clock() >= opts.deadline end
  local i = 1
  while i <= #units do
    if late() then summary.stopped = "deadline" break end
    local u = units[i]
    local stopped
    if u.probe == "forward" then
      local batch = {}
      while units[i] and units[i].probe == "forward" and #batch < M.BATCH do
        batch[#batch + 1] = units[i]
        i = i + 1
      end
      if opts.progress then opts.progress(batch[1], i - #batch, #units) end
      stopped = run_forward(ctx, w, batch, summary)
    else
      if opts.progress then opts.progress(u, i, #units) end
      stopped = run_size(ctx, w, u, summary)
      i = i + 1
    end
    if stopped then summary.stopped = stopped break end
  end
  return summary
end

return M
