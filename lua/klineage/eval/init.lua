-- The evaluation: every task of a suite optimized by every forward policy
-- (and, for a seeded one, every seed: the policy says seeded = true) under the same gate and the same
-- counted budget. Each (task, policy, seed) is a unit with two run folders
-- under the eval's folder: the optimize run (its budget is the loop's
-- alone) and the measure run (the final kernel against the task's
-- baseline by the interleaved compare on cuda, then re-checked with fresh
-- seeds). A unit that finished writes result.json in its optimize folder;
-- a killed eval resumes from the journals and skips finished units.
--
--   eval.suite(ref) -> { name, tasks = { task... } } | nil, failure
--     ref = "lineages" (the seven lineages' v0; each task's lineage is the
--     one left out of its skills) or a suite folder (examples/suites/README.md)
--     task = { name, workload, kernel = { source, label, file }, lineage,
--              timed_at = { params, why } when M.TIMED_AT times it at a
--              bench size other than params (the workload is then that size's) }
--   eval.timed_at(w, i) -> w timed at its bench_params[i] (its sha256 names
--     the size too), that entry: what the lineages suite makes of a spec in
--     M.TIMED_AT, for a caller that must name the same version
--   eval.unit(opts, task, policy, seed) -> result (see below)
--   eval.unit_name(opts, task, policy, seed) -> the unit's folder name
--   eval.cannot_run(opts, task, policy, seed) -> a not_run result when the
--     policy cannot run here (it needs an LLM and none is given), before
--     any folder or device
--   eval.read_result(runs_dir, name) -> a finished unit's result | nil
--   eval.finished(opts, task, policy, seed) -> the unit's result | nil;
--     raises bad_input when it finished on another version of the workload
--   (eval/plan.lua: the units a command line gives; eval/table.lua: the
--   table as text; klineage.slurm.eval_units runs them on Slurm)
--   eval.aggregate(results) -> rows per policy, and fills each result's
--     to90_best (cycles to 90 % of the best final any policy reached)
--
-- opts = { runs (the eval's folder: one run folder per unit), eval (its name), backend, budget, skills (records;
--          none: each unit's run context reads skills/<its arch>), skills_dir (--skills),
--          observations (to learn from per task; with leave_one_out, those
--          of the task's own lineage are left out), leave_one_out, llm }
-- result = { task, policy, seed, stopped, steps, cycles, speedup, ci,
--            measured, recheck (the fresh-seed verdict), curve = { {cycle,
--            speedup}... }, gains = { { family, speedup }... } (M.curve), to90, seconds, timed_at (the task's), spec (the
--            workload's sha256: a finished unit is reused only for it), not_run
--            (why, when the policy could not run: e.g. no LLM provider) }
local context = require "klineage.device.context"
local files = require "klineage.base.files"
local gate = require "klineage.gate"
local journal = require "klineage.store.journal"
local learn = require "klineage.skills.learn"
local runs = require "klineage.store.runs"
local search = require "klineage.search"
local workload = require "klineage.workload"
local verdicts = require "klineage.base.verdicts"
local hash = require "kl.hash"
local host = require "kl.host"

local M = {}

M.LINEAGES = { "bfs", "conv2d", "raytrace", "reduction", "sgemm", "softmax", "transpose" }
M.RECHECK_SEEDS = { 101, 102, 103 }

-- Lineages the eval times at one of their bench_params entries instead of
-- params, and why: a unit is 30 cycles, each with a compare of 80 samples.
M.TIMED_AT = {
  raytrace = { bench = 1, why = "v0 tests every ray against every triangle: 3.79 s a launch on the 1,081,344-triangle "
    .. "bench scene (README), so one compare against it takes minutes; on the second bench scene (12,288 triangles) it "
    .. "takes 41.7 ms" },
}

-- w timed at its bench_params[i]: that size becomes params, the test sizes
-- stay what they were, and the spec's hash names the size too, so that no
-- journal or worker cache takes one size's results for the other's.
function M.timed_at(w, i)
  local over = assert(w.bench_params and w.bench_params[i], "no such bench size")
  local v = {}
  for k, x in pairs(w) do v[k] = x end
  v.bench_params, v.test_params = nil, {}
  -- workload.sizes merges each entry over params, as the gate would
  for _, s in ipairs(workload.sizes(w)) do
    if not s.bench then v.test_params[#v.test_params + 1] = s.params end
    if s.label == "bench " .. (i + 1) then v.params = s.params end
  end
  v.sha256 = hash.sha256(w.sha256 .. "\0timed at " .. runs.key(v.params))
  return v, over
end

local function lineages_suite()
  local tasks = {}
  for _, name in ipairs(M.LINEAGES) do
    local w, f = workload.load(name)
    if not w then return nil, f end
    local file = w.dir .. "/" .. w.lineage[1]
    local task = { name = name, workload = w, lineage = name,
                   kernel = { source = assert(files.read_text(file)), label = w.lineage[1], file = file } }
    local at = M.TIMED_AT[name]
    if at then
      local over
      task.workload, over = M.timed_at(w, at.bench)
      task.timed_at = { params = over, why = at.why }
    end
    tasks[#tasks + 1] = task
  end
  return { name = "lineages", tasks = tasks }
end

function M.suite(ref)
  if ref == "lineages" then return lineages_suite() end
  local fs = require "kl.fs"
  local names = fs.list(ref)
  if not names then return nil, verdicts.failure("bad_input", ref .. " is not a suite folder (nor 'lineages')") end
  table.sort(names)
  local tasks = {}
  for _, name in ipairs(names) do
    local dir = ref .. "/" .. name
    -- A task's files stay inside the suite, links resolved: a link to
    -- elsewhere would copy any readable file into the run folders.
    for _, leaf in ipairs({ "", "/workload.lua", "/kernel.cu" }) do
      if require("kl.fs").stat(dir .. leaf) then
        local inside, of = files.inside(ref, dir .. leaf)
        if not inside then return nil, verdicts.failure("bad_input", string.format("task %s: %s", files.display(name), of.message)) end
      end
    end
    if files.read_text(dir .. "/workload.lua") then
      local w, f = workload.load(dir .. "/workload.lua")
      if not w then return nil, verdicts.failure("bad_input", string.format("task %s: %s", name, tostring(f and f.message or f))) end
      local source = files.read_text(dir .. "/kernel.cu")
      if not source then return nil, verdicts.failure("bad_input", "task " .. name .. " has no kernel.cu") end
      tasks[#tasks + 1] = { name = name, workload = w, kernel = { source = source, label = "kernel.cu", file = dir .. "/kernel.cu" } }
    end
  end
  if #tasks == 0 then return nil, verdicts.failure("bad_input", ref .. " holds no task (a folder with workload.lua and kernel.cu)") end
  return { name = ref:gsub("/+$", ""):match("[^/]+$"), tasks = tasks }
end

local function context_for(opts, id, budget, w)
  local exists = runs.find(id, opts.runs)
  return context.new { backend = opts.backend, journal = opts.runs, budget = budget, workloads = { w }, skills = opts.skills_dir,
                       resume = exists and id or nil, run_id = not exists and id or nil,
                       command = { "klineage", "eval", opts.eval } }
end

-- The speedup after each charged cycle, from the optimize run's journal:
-- each kept kernel's measured compares multiplied up along its path from
-- the input (a policy that keeps one kernel a step has one path; a beam's
-- kernels each have their own).
-- gains: each kept step's family and measured speedup over the kernel it
-- changed ({ { family, speedup } ... }, in order); a schedule's family is
-- its first primitive ("schedule:split_reduce" is "split_reduce").
function M.curve(dir)
  local cycles, at, curve, gains = 0, {}, { { 0, 1 } }, {}
  for _, r in ipairs(journal.read(dir .. "/journal.jsonl") or {}) do
    if r.charged then cycles = cycles + 1 end
    if r.kind == "optimize_step" then
      local from = at[r.from] or 1
      if r.effect and r.effect.measured then
        at[r.to] = from * r.effect.speedup
        curve[#curve + 1] = { cycles, at[r.to] }
        gains[#gains + 1] = { family = tostring(r.skill):gsub("^schedule:", ""), speedup = r.effect.speedup }
      else
        at[r.to] = from
      end
    end
  end
  return curve, gains
end

-- The first cycle whose speedup reaches 90 % of target (nil when nothing gained).
function M.cycles_to(curve, target)
  if not target or target <= 1 then return nil end
  for _, p in ipairs(curve) do
    if p[2] >= 0.9 * target then return p[1] end
  end
end

-- Learned once per lineage left out (the held-out suite leaves none out: once in all).
local function skills_for(opts, task)
  if not opts.observations then return opts.skills, nil end
  local out = opts.leave_one_out and task.lineage or ""
  opts.learned = opts.learned or {}
  if not opts.learned[out] then
    local train = {}
    for _, o in ipairs(opts.observations) do
      if o.lineage ~= out then train[#train + 1] = o end
    end
    opts.learned[out] = { skills = learn.repository(train), train = train }
  end
  return opts.learned[out].skills, opts.learned[out].train
end

-- A unit's folder name: task-policy[-sSEED]-backend.
function M.unit_name(opts, task, policy, seed)
  local parts = { task.name, (policy:gsub("[^%w]", "_")) }
  if seed then parts[#parts + 1] = "s" .. seed end
  parts[#parts + 1] = opts.backend or "default"
  return table.concat(parts, "-")
end

local function measure(opts, task, final, id)
  local m = assert(context_for(opts, "measure-" .. id, nil, task.workload))
  local w, v0 = task.workload, task.kernel
  local base = { source = v0.source, label = v0.label, kernel = w.kernel, file = v0.file }
  local out = { measured = m.timed }
  if out.measured then
    if final.sha256 == hash.sha256(v0.source) then
      out.speedup, out.ci = 1, { 1, 1 }
    else
      local c = gate.compare(m, base, { source = final.source, label = "final", kernel = w.kernel, file = w.dir .. "/final" }, w)
      if c then out.speedup, out.ci = c.speedup, c.ci end
    end
  end
  local re = gate.evaluate(m, { source = final.source, label = "final", kernel = w.kernel, file = w.dir .. "/final" }, w,
    { baseline = base, seeds = M.RECHECK_SEEDS, random_seeds = 2, profile = false })
  out.recheck = re.verdict
  m:close()
  return out
end

-- Where and with what a unit ran, from its run record: the eval's journal
-- keeps it, so that its report needs no unit's journal.
local function ran_on(dir)
  local records = journal.read(dir .. "/journal.jsonl")
  local r = records and records[1]
  if not r then return nil end
  return { device = r.device, arch = r.arch, versions = r.versions, backend = r.backend, time = r.time }
end

-- The result of the unit <runs>/<id> when it finished, or nil.
function M.read_result(runs_dir, id)
  local done = files.read_text(runs_dir .. "/" .. id .. "/result.json")
  if not done then return nil end
  local r = require("cjson").decode(done)
  r.unit = r.unit or id
  r.ran_on = r.ran_on or ran_on(runs_dir .. "/" .. id)
  return r
end

-- The result of a finished unit, or nil. A unit that finished on another
-- version of the task's workload (or at another size) is refused, not
-- reused: its figures would stand for a task it did not run.
function M.finished(opts, task, policy, seed)
  local id = M.unit_name(opts, task, policy, seed)
  local done = M.read_result(opts.runs, id)
  if done and done.spec and done.spec ~= task.workload.sha256 then
    verdicts.raise("bad_input", string.format("%s finished with another version of %s's workload (or at another size): "
      .. "remove %s/%s and %s/measure-%s, or give another --run", id, task.name, opts.runs, id, opts.runs, id))
  end
  return done
end

-- The result of a unit whose policy cannot run here (an LLM policy with no
-- provider), said without a run folder or a device; else nil.
function M.cannot_run(opts, task, policy, seed)
  local p = search.load_policy(policy, "forward")
  -- only an LLM is missing for good here; a policy without memory fails in its unit, as any bad input does
  local f = p and search.missing(p, { llm = opts.llm ~= nil, memory = true })
  if f then
    return { task = task.name, policy = policy, seed = seed, unit = M.unit_name(opts, task, policy, seed),
             not_run = f.message, verdict = f.verdict, seconds = 0 }
  end
end

function M.unit(opts, task, policy, seed)
  local id = M.unit_name(opts, task, policy, seed)
  local dir = opts.runs .. "/" .. id
  local done = M.finished(opts, task, policy, seed)
  if done then return done end
  local refused = M.cannot_run(opts, task, policy, seed)
  if refused then return refused end
  local t0 = host.clock()
  local skills, train = skills_for(opts, task)
  local ctx = assert(context_for(opts, id, opts.budget, task.workload))
  local summary, f = verdicts.catch(search.run, ctx, task.workload, { input = task.kernel, direction = "forward",
    skills = skills, policy = policy, seed = seed, memory = train or opts.observations, llm = opts.llm })
  dir = ctx.run and ctx.run.dir or dir
  -- The unit's cycles are every cycle its journal charged: a unit resumed
  -- after a kill counts the cycles of its first session too (the summary
  -- counts this session's alone).
  local used = ctx:spent()
  ctx:close()
  local result = { task = task.name, policy = policy, seed = seed, unit = id, timed_at = task.timed_at,
                   spec = task.workload.sha256 }
  if not summary then
    result.not_run = tostring(f and f.message or f)
    result.verdict = f and f.verdict
  else
    result.stopped, result.steps, result.cycles = summary.stopped, #summary.steps, used
    for k, v in pairs(measure(opts, task, summary.final, id)) do result[k] = v end
    result.curve, result.gains = M.curve(dir)
    result.ran_on = ran_on(dir)
    result.to90 = M.cycles_to(result.curve, result.speedup)
  end
  result.seconds = host.clock() - t0
  if result.not_run then return result end -- not finished: a later eval (with a provider) runs it
  -- Written last, and whole: a unit killed before this line runs again from its journals.
  local ok, wf = files.write_atomic(dir .. "/result.json", require("cjson").encode(result))
  if not ok then verdicts.raise(wf.verdict, wf.message) end
  return result
end

-- The eval's own journal (<eval folder>/journal.jsonl, what `klineage
-- report` renders): a run record when the folder is new, a resume record
-- when it is not, then one eval_unit record per finished unit, each written
-- once (a unit's record is its result.json, with the unit's name).
--   eval.journal_units(opts, command, results) -> true | nil, failure
--   eval.run_record(opts, command) -> the run record (no seq, no time)
--   eval.unit_record(result) -> its eval_unit record, or nil for a unit not run
function M.run_record(opts, command)
  return { kind = "run", run = opts.eval, command = command, backend = opts.backend, budget = opts.budget, suite = opts.suite }
end

function M.unit_record(r)
  if r.not_run or not r.unit then return nil end
  local rec = {}
  for k, v in pairs(r) do rec[k] = v end
  rec.kind = "eval_unit"
  return rec
end

function M.journal_units(opts, command, results)
  local path = opts.runs .. "/journal.jsonl"
  local old = journal.read(path) or {}
  local seen = {}
  for _, r in ipairs(old) do if r.kind == "eval_unit" then seen[r.unit] = true end end
  local j, f = journal.open(path)
  if not j then return nil, f end
  local first = old[1]
  if not first then
    local run = M.run_record(opts, command)
    run.time = os.time()
    j:append(run)
  else
    j:append({ kind = "resume", command = command })
  end
  for _, r in ipairs(results) do
    local rec = M.unit_record(r)
    if rec and not seen[rec.unit] then j:append(rec) end
  end
  j:close()
  return true
end

local function geomean(xs)
  if #xs == 0 then return nil end
  local l = 0
  for _, x in ipairs(xs) do l = l + math.log(x) end
  return math.exp(l / #xs)
end

local function mean(xs)
  if #xs == 0 then return nil end
  local s = 0
  for _, x in ipairs(xs) do s = s + x end
  return s / #xs
end

-- Per policy: the geometric-mean final speedup (a unit that ran counts,
-- a wrong kernel counts as 1: it would not be kept), fast_1 and fast_2
-- (the share of tasks correct and faster beyond noise than 1x and 2x),
-- the mean cycles to 90 % of its own final and of the best final of any
-- policy on the task, and the wrong kernels accepted.
function M.aggregate(results)
  local best = {}
  for _, r in ipairs(results) do
    if r.speedup and r.recheck == "ok" then best[r.task] = math.max(best[r.task] or 1, r.speedup) end
  end
  local by, order = {}, {}
  for _, r in ipairs(results) do
    if r.curve then r.to90_best = M.cycles_to(r.curve, best[r.task]) end
    local p = by[r.policy]
    if not p then
      p = { policy = r.policy, units = 0, ran = 0, speedups = {}, to90 = {}, to90_best = {}, fast1 = 0, fast2 = 0, wrong = 0, seconds = 0 }
      by[r.policy], order[#order + 1] = p, r.policy
    end
    p.units, p.seconds = p.units + 1, p.seconds + (r.seconds or 0)
    if r.not_run then
      p.not_run = r.not_run
    else
      p.ran = p.ran + 1
      local ok = r.recheck == "ok"
      if not ok then p.wrong = p.wrong + 1 end
      if r.speedup then
        p.speedups[#p.speedups + 1] = ok and r.speedup or 1
        if ok and r.ci and r.ci[1] > 1 then p.fast1 = p.fast1 + 1 end
        if ok and r.ci and r.ci[1] > 2 then p.fast2 = p.fast2 + 1 end
      end
      p.to90[#p.to90 + 1] = r.to90
      p.to90_best[#p.to90_best + 1] = r.to90_best
    end
  end
  local rows = {}
  for _, name in ipairs(order) do
    local p = by[name]
    rows[#rows + 1] = { policy = name, units = p.units, ran = p.ran, not_run = p.ran == 0 and p.not_run or nil,
                        geomean = geomean(p.speedups), measured = #p.speedups,
                        fast1 = #p.speedups > 0 and p.fast1 / #p.speedups or nil,
                        fast2 = #p.speedups > 0 and p.fast2 / #p.speedups or nil,
                        to90 = mean(p.to90), to90_best = mean(p.to90_best), wrong = p.wrong, seconds = p.seconds }
  end
  return rows
end

return M
