-- Observations from walk journals: every judged simplification, inverted.
-- A walk step (or a judged candidate the walk did not follow, its
-- "walk_evidence") simplifies kernel F into T; the optimization is T -> F,
-- applied to T. A probe (klineage.skills.probe) applied the optimization
-- forward, T -> F, in a context the walks did not judge; a size probe
-- timed a recorded step at another bench size, and its facts are those
-- at that size (the observation's `size` names it). Its observation (the shape is at the top of
-- skills/learn.lua) has T's facts as `facts`, F's as `facts_after`, and the
-- step's compare as its effect: F faster than T beyond noise is "helped".
--
--   extract.folder(dir [, opts]) -> observations, problems
--   extract.folders(dirs [, opts]) -> observations, problems
--     opts = { arch = "sm_90" }
--     observations are deduplicated (one per skill, F and T: greedy and
--     breadth judge the same undo at the same kernel) and sorted by
--     evidence run, then key; problems = { { path, message } }
--
-- What names the skill: a transform's undo is that transform; a recorded
-- step the transforms explain is each transform of the chain; a recorded
-- step nothing explains, and a single hunk of one, are templates, named
-- after the lineage and the version they optimize into, with the step's
-- hunks as the template's text. Each step is also evidence for the
-- kernel-IR schedule families its schedule delta names ("schedule:stage",
-- with the primitive's parameters as `schedule`), whatever else names it.
--
-- Facts are computed again from the stored sources, not read from the
-- walk's records: resources (registers, spills, shared memory, occupancy)
-- come from the gate's compile stage of the kernel's own evaluation in
-- the journal, else from another given folder's evaluation of the same
-- text (the first run by id), and only when no journal has one from NVRTC
-- here; profile facts come from the run's own evaluation. A fresh compile
-- is the last resort because ptxas is not reproducible at a register
-- limit: conv2d's v8 under __launch_bounds__(256, 2) spills 4 bytes in one
-- compile and none in the next, and the learned files must not change.
local facts = require "klineage.facts"
local roles = require "klineage.facts.roles"
local schedule_delta = require "klineage.facts.schedule_delta"
local files = require "klineage.base.files"
local journal = require "klineage.store.journal"
local stepdiff = require "klineage.pattern.stepdiff"
local workload = require "klineage.workload"
local hash = require "kl.hash"

local M = {}

local TEMPLATE_MAX = 6000 -- bytes of hunk text kept per side

local function outcome_of(verdict, effect)
  if verdict ~= "ok" then return "rejected" end
  if not effect or not effect.measured then return nil end
  if effect.outcome == "faster" then return "helped" end
  if effect.outcome == "slower" then return "hurt" end
  return "no_difference"
end

local function stem(label) return (tostring(label):gsub("%.cu$", ""):gsub("[^%w_-]", "_")) end

-- The gate's compile stage of an evaluation record, as facts.of takes it.
local function recorded_compile(ev, arch)
  local compile = ev and ev.stages and ev.stages.compile
  return compile and compile.functions and { functions = compile.functions, arch = ev.arch or arch } or nil
end

-- The run's pieces: workload, sources, evaluations and their compiles by
-- sha256, labels.
local function open_run(dir)
  local records, rf = journal.read(dir .. "/journal.jsonl")
  if not records then return nil, rf.message end
  local run = { dir = dir, records = records, evaluations = {}, compiled = {}, labels = {}, texts = {} }
  for _, r in ipairs(records) do
    if r.kind == "run" and r.specs and r.specs[1] then
      run.name, run.id, run.arch, run.backend = r.specs[1].name, r.run, r.arch, r.backend
    end
    if r.kind == "evaluation" and r.candidate and r.candidate.sha256 then
      run.evaluations[r.candidate.sha256] = r
      -- an evaluation a cached compile answered may carry no compile stage
      run.compiled[r.candidate.sha256] = recorded_compile(r, r.arch) or run.compiled[r.candidate.sha256]
    end
    if (r.kind == "walk_step" or r.kind == "probe") and r.labels then
      run.labels[r.from] = run.labels[r.from] or r.labels.from
      run.labels[r.to] = run.labels[r.to] or r.labels.to
    end
  end
  if not run.name then return nil, "no run record naming its workload" end
  local w, wf = workload.load(run.name)
  if not w then return nil, wf.message end
  run.w = w
  for _, file in ipairs(w.lineage) do
    local text = files.read_text(w.dir .. "/" .. file)
    if text then
      local sha = hash.sha256(text)
      run.texts[sha], run.labels[sha] = text, run.labels[sha] or file
    end
  end
  return run
end

local function text_of(run, sha)
  if run.texts[sha] == nil then
    -- checked against its name: a swapped file is not learned from
    run.texts[sha] = require("klineage.store.runs").read_source(run.dir, sha) or false
  end
  return run.texts[sha] or nil
end

-- params: the sizes of a size probe. The evaluation's profile was at the
-- bench size, so there only its compile resources count.
local function facts_of(run, sha, arch, params)
  if params then
    -- JSON gave integral sizes back as floats; a launch needs the integers.
    local p = {}
    for k, v in pairs(params) do p[k] = math.type(v) == "float" and math.tointeger(v) or v end
    params = p
  end
  run.facts = run.facts or {}
  local id = params and sha .. require("klineage.store.runs").key(params) or sha
  if run.facts[id] ~= nil then return run.facts[id] or nil end
  local text, values = text_of(run, sha), false
  if text then
    local ev = run.evaluations[sha]
    local res = run.compiled[sha] or (run.elsewhere and run.elsewhere[sha])
    local f = facts.of(text, run.w.kernel, { workload = run.w, arch = arch, compile = res, record = not params and ev or nil,
                                             params = params })
    if f then
      -- JSON gave the record's numbers as floats: an integral one is the
      -- integer NVRTC would have given, whichever source a fact came from.
      values = {}
      for k, v in pairs(f.values) do values[k] = math.type(v) == "float" and math.tointeger(v) or v end
    end
  end
  run.facts[id] = values
  return values or nil
end

-- Every name the kernels of a step and the run's spec chose (sorted):
-- the learner refuses a fact whose key embeds one (klineage.facts.roles).
local function names_of(run, shas)
  local set = {}
  for _, sha in ipairs(shas) do
    run.names = run.names or {}
    if run.names[sha] == nil then
      local text, got = text_of(run, sha), false
      if text then
        local unit = require("kl.source").parse(text)
        local fn
        for _, x in ipairs(unit:functions()) do if x:name() == run.w.kernel and x:body() then fn = x end end
        got = roles.names(unit, fn, run.w)
      end
      run.names[sha] = got
    end
    for n in pairs(run.names[sha] or {}) do set[n] = true end
  end
  local out = {}
  for n in pairs(set) do out[#out + 1] = n end
  table.sort(out)
  return out
end

-- The step's hunks (T to F) as a template's two sides.
local function template_of(run, t_sha, f_sha)
  local t, f = text_of(run, t_sha), text_of(run, f_sha)
  if not t or not f then return nil end
  local before, after = {}, {}
  for _, h in ipairs(stepdiff.diff(t, f)) do
    if not h.trivia then
      before[#before + 1] = h.old.text or ""
      after[#after + 1] = h.new.text or ""
    end
  end
  local function cap(parts) return table.concat(parts, "\n/* ... */\n"):sub(1, TEMPLATE_MAX) end
  return { before = cap(before), after = cap(after) }
end

-- A simplified kernel the lineage does not name, by what made it.
local function label_of(p)
  p = p or {}
  if p.kind == "hunk" then return string.format("%s, %s reverted", tostring(p.name), tostring(p.edit)) end
  return string.format("undo %s %s", tostring(p.name), tostring(p.edit or ""))
end

-- A primitive's parameters as a prior can hold them on another kernel:
-- numbers and block shapes ("32x8"), never a name the kernel chose (an
-- operand, an axis).
local function name_free(params)
  local out = {}
  for k, v in pairs(params or {}) do
    if type(k) == "string" and (math.type(v) == "integer" or (type(v) == "string" and v:match("^%d+x?[%dx]*$"))) then
      out[k] = math.type(v) == "integer" and v or (v:match("^%d+$") and math.tointeger(tonumber(v)) or v)
    end
  end
  return out
end

-- The kernel-IR schedule families a judged step moved along (T to F), by
-- the schedule signatures of its two kernels (klineage.facts.schedule_delta):
-- one skill "schedule:FAMILY" a primitive of an explained delta, with the
-- primitive's name-free parameters. A step the signature cannot account
-- for whole names none: its evidence would be a family's only in part.
local function schedule_skills(run, t_sha, f_sha)
  run.deltas = run.deltas or {}
  local id = t_sha .. "|" .. f_sha
  if run.deltas[id] == nil then
    local t, f = text_of(run, t_sha), text_of(run, f_sha)
    local d = t and f and schedule_delta.pair(t, f, { kernel = run.w.kernel, params = run.w.params })
    run.deltas[id] = d and d.explained and d or false
  end
  local d, out = run.deltas[id], {}
  for _, p in ipairs(d and d.primitives or {}) do
    if not p.removed then
      out[#out + 1] = { skill = "schedule:" .. p.name, schedule = { family = p.name, params = name_free(p.params), delta = d.text } }
    end
  end
  return out
end

-- The skills one judged simplification is evidence for.
local function skills_of(run, r)
  local p = r.producer or {}
  local lineage = run.name
  if p.kind == "transform" then
    return { { skill = p.name, transform = p.name, site = p.edit, params = p.params } }
  end
  local into = stem(run.labels[r.from] or r.from:sub(1, 12))
  if p.kind == "hunk" then
    -- A lone hunk that breaks the kernel says nothing of the optimization.
    if (r.verdict or "ok") ~= "ok" then return {} end
    local n = tostring(p.edit or ""):match("^hunk (%d+)") or "x"
    return { { skill = string.format("template-%s-%s-hunk%s", lineage, into, n), template = true } }
  end
  local x = r.explained
  if x and x.explained and x.chain then
    local out, seen = {}, {}
    for _, c in ipairs(x.chain) do
      if not seen[c.transform] then
        seen[c.transform] = true
        out[#out + 1] = { skill = c.transform, transform = c.transform, site = c.key, params = c.params }
      end
    end
    return out
  end
  return { { skill = string.format("template-%s-%s", lineage, into), template = true } }
end

local function extract_run(run, opts)
  local dir = run.dir
  local arch = opts.arch or run.arch or "sm_90"
  local out, problems = {}, {}
  for _, r in ipairs(run.records) do
    local judged = r.kind == "walk_step" or r.kind == "walk_evidence" or r.kind == "probe"
    local skills = judged and r.from and r.to and skills_of(run, r) or {}
    if #skills > 0 then
      for _, s in ipairs(schedule_skills(run, r.to, r.from)) do skills[#skills + 1] = s end
    end
    if #skills > 0 then
      local before, after = facts_of(run, r.to, arch, r.params), facts_of(run, r.from, arch, r.params)
      if not before or not after then
        problems[#problems + 1] = { path = dir, message = string.format("%s %s: the kernels' facts could not be computed", r.kind, tostring(r.key)) }
      else
        local effect = r.effect or {}
        for _, s in ipairs(skills) do
          out[#out + 1] = {
            skill = s.skill, transform = s.transform, params = s.params, site = s.site, schedule = s.schedule,
            lineage = run.name, from = run.labels[r.to] or label_of(r.producer),
            to = run.labels[r.from] or r.from:sub(1, 12),
            outcome = outcome_of(r.verdict or "ok", effect), verdict = r.verdict or "ok",
            speedup = effect.measured and effect.speedup or nil, ci = effect.measured and effect.ci or nil,
            measured = effect.measured == true, size = r.size,
            facts = before, facts_after = after, names = names_of(run, { r.to, r.from }),
            template = s.template and template_of(run, r.to, r.from) or nil,
            -- from: the kernel the optimization starts at; candidate: what it gives
            evidence = { run = run.id, key = r.key, from = r.to, candidate = r.from, kind = r.kind },
            backend = run.backend, arch = arch,
          }
        end
      end
    end
  end
  return out, problems
end

function M.folder(dir, opts)
  local run, err = open_run(dir)
  if not run then return {}, { { path = dir, message = err } } end
  return extract_run(run, opts or {})
end

local function by_evidence(a, b)
  if a.evidence.run ~= b.evidence.run then return a.evidence.run < b.evidence.run end
  if a.evidence.key ~= b.evidence.key then return a.evidence.key < b.evidence.key end
  return a.skill < b.skill
end

function M.folders(dirs, opts)
  opts = opts or {}
  local all, problems, runs = {}, {}, {}
  for _, dir in ipairs(dirs) do
    local run, err = open_run(dir)
    if run then runs[#runs + 1] = run else problems[#problems + 1] = { path = dir, message = err } end
  end
  -- every recorded compile of a text, the first run by id's (whatever the
  -- folders' order), for the kernels a run judged but never evaluated
  table.sort(runs, function(a, b)
    if a.id ~= b.id then return tostring(a.id) < tostring(b.id) end
    return a.dir < b.dir
  end)
  local compiled = {}
  for _, run in ipairs(runs) do
    for sha, res in pairs(run.compiled) do compiled[sha] = compiled[sha] or res end
    run.elsewhere = compiled
  end
  for _, run in ipairs(runs) do
    local obs, p = extract_run(run, opts)
    for _, o in ipairs(obs) do all[#all + 1] = o end
    for _, x in ipairs(p) do problems[#problems + 1] = x end
  end
  table.sort(all, by_evidence)
  -- One observation per (skill, T, F, size): the measured one first.
  local kept, index = {}, {}
  for _, o in ipairs(all) do
    local id = table.concat({ o.skill, o.evidence.from, o.evidence.candidate, o.size or "" }, "|")
    local at = index[id]
    if not at then
      kept[#kept + 1] = o
      index[id] = #kept
    elseif o.measured and not kept[at].measured then
      kept[at] = o
    end
  end
  return kept, problems
end

return M
