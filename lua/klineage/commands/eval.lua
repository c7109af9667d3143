local args = require "klineage.args"
local llm_mod = require "klineage.llm"

local FLAGS = llm_mod.add_flags({ budget = "number", policies = "string", leave_one_out = "boolean", seeds = "number",
                                  backend = "string", journal = "string", run = "string", skills = "string",
                                  learn_from = "list", tasks = "string", seconds = "number", json = "boolean", quiet = "boolean" })

local function x(v) return v and string.format("%.2fx", v) or "-" end
local function pct(v) return v and string.format("%.0f%%", 100 * v) or "-" end
local function num(v) return v and string.format("%.1f", v) or "-" end

local function seed_of(r) return r.seed and tostring(math.tointeger(r.seed) or r.seed) or "" end

local function print_unit(r)
  if r.not_run then
    print(string.format("%-18s %-10s %4s  not run: %s", r.task, r.policy, seed_of(r), r.not_run))
    return
  end
  local ci = r.ci and string.format("[%.2f, %.2f]", r.ci[1], r.ci[2]) or ""
  print(string.format("%-18s %-10s %4s %5d %6d %8s %-14s %5s %6s %9s  %s", r.task, r.policy, seed_of(r), r.steps, r.cycles,
    x(r.speedup), ci, r.to90 and math.tointeger(r.to90) or r.to90 or "-", r.to90_best and math.tointeger(r.to90_best) or "-",
    r.recheck, r.stopped))
end

return {
  flags = FLAGS,
  summary = "evaluate policies (klineage and the baselines) on a suite under the same gate and budget",
  usage = "usage: klineage eval SUITE [--budget 30] [--policies klineage,forward,memory,random] [--leave-one-out] "
    .. "[--seeds N] [--learn-from RUN]... [--skills DIR] [--tasks a,b] [--backend cuda|emu] [--journal DIR] [--run NAME] "
    .. "[--seconds S] " .. llm_mod.USAGE .. " [--json] [--quiet]",
  help = [[
Optimizes every task of SUITE with every policy, each under the same gate
and the same counted budget, then measures each final kernel against the
task's baseline (cuda: the interleaved compare in a run of its own) and
checks it again with fresh seeds: a kernel accepted and then found wrong
is counted, and must never happen.

SUITE is "lineages" (the seven lineages' v0) or a suite folder: one
subfolder per task with workload.lua, kernel.cu (the naive kernel: the
baseline and the correctness reference) and the spec's C reference
(examples/suites/README.md; examples/suites/held-out is one).

Skills: learned from the walk and probe run folders given by --learn-from
(with --leave-one-out, the task's own lineage left out: the default for
"lineages"), else the repository --skills DIR (default skills/<arch>).

Each (task, policy, seed) is a unit with its own run folders under the
eval's folder (--journal DIR/--run NAME); a killed eval resumes with the
same command, and a finished unit is not judged again. --seconds stops
starting new units after S seconds (run the command again to go on).

The table: per unit the final speedup and its interval, the cycles to
90 % of its own final speedup (to90) and to 90 % of the best final any
policy reached on the task (to90best), and the re-check's verdict. The
aggregate per policy: the geometric-mean speedup, fast_1 and fast_2 (the
share of tasks correct and faster beyond noise than 1x and 2x), the mean
cycles to 90 %, the wrong kernels accepted. On emu nothing is timed:
speedups are "-" and correctness is what is measured.

options:
  --budget N         gate cycles per unit (default 30)
  --policies LIST    klineage and baselines (forward, random, memory,
                     llm-only) or policy files (default klineage)
  --leave-one-out    skills for a lineage task learned without its lineage
  --seeds N          seeds of a randomized policy (random; default 3)
  --learn-from RUN   a walk or probe run folder to learn skills from (repeat)
  --skills DIR       the skill repository, when nothing is learned here
  --tasks a,b        only these tasks of the suite
  --backend NAME     cuda (default where a GPU answers) or emu
  --journal DIR      the runs folder (default $KLINEAGE_RUNS, ...)
  --run NAME         the eval's folder name (default eval-<suite>-<backend>)
  --seconds S        start no unit after S seconds
]] .. llm_mod.HELP .. [[

  --json             print the units and the aggregate as JSON
  --quiet            no progress line]],
  run = function(argv)
    local a = args.parse(argv, { flags = FLAGS, min = 1, max = 1 })
    local eval = require "klineage.eval"
    local files = require "klineage.files"
    local host = require "kl.host"
    local budget = a.budget or 30
    if math.type(budget) ~= "integer" or budget < 1 then args.usage_error("--budget needs a whole number of cycles >= 1") end
    local nseeds = a.seeds or 3
    if math.type(nseeds) ~= "integer" or nseeds < 1 then args.usage_error("--seeds needs a whole number >= 1") end
    if a.run and not a.run:match("^[%w_.%-]+$") then args.usage_error("--run takes a plain name ([A-Za-z0-9_.-])") end
    local suite, sf = eval.suite(a.positional[1])
    if not suite then args.usage_error("%s", sf.message) end
    if a.tasks then
      local want, kept = {}, {}
      for t in a.tasks:gmatch("[^,]+") do want[t] = true end
      for _, t in ipairs(suite.tasks) do if want[t.name] then kept[#kept + 1] = t want[t.name] = nil end end
      local missing = next(want)
      if missing then args.usage_error("--tasks: %s has no task '%s'", suite.name, missing) end
      suite.tasks = kept
    end
    local agent = require "klineage.agent"
    local policies = {}
    for p in (a.policies or "klineage"):gmatch("[^,]+") do
      local ok, pf = agent.load_policy(p)
      if not ok then args.usage_error("--policies: %s", pf.message) end
      policies[#policies + 1] = p
    end
    local opts = { budget = budget, backend = a.backend, leave_one_out = a.leave_one_out or suite.name == "lineages" }
    if a.learn_from then
      for _, d in ipairs(a.learn_from) do
        if not files.read_text(d .. "/journal.jsonl") then args.usage_error("--learn-from %s is not a run folder (no journal.jsonl)", d) end
      end
      opts.observations = require("klineage.skills.extract").folders(a.learn_from)
    else
      if suite.name == "lineages" and not a.skills then
        args.usage_error("the lineages suite learns its skills leave-one-out: give the walk and probe run folders with --learn-from")
      end
      local records, problems = require("klineage.skills.store").load(a.skills or (host.home or ".") .. "/skills/sm_90")
      if not records then args.usage_error("%s", problems.message) end
      opts.skills = records
    end
    local llm_client, lf = llm_mod.client_from_args(a)
    if a.llm and not llm_client then args.usage_error("--llm: %s", lf.message) end
    opts.llm = llm_client and llm_mod.seam(llm_client)
    opts.llm_client = llm_client
    local root, rf = require("klineage.runs").root(a.journal)
    if not root then args.usage_error("%s", rf.message) end
    local backend_name = a.backend or "default"
    opts.eval = a.run or string.format("eval-%s-%s", suite.name, backend_name)
    opts.runs = root .. "/" .. opts.eval
    assert(require("kl.proc").mkdir_p(opts.runs))
    local units = {}
    for _, t in ipairs(suite.tasks) do
      for _, p in ipairs(policies) do
        if eval.RANDOMIZED[p] then
          for s = 1, nseeds do units[#units + 1] = { task = t, policy = p, seed = s } end
        else
          units[#units + 1] = { task = t, policy = p }
        end
      end
    end
    if not a.quiet then
      io.stderr:write(string.format("klineage eval: %s, %d tasks x %d policies = %d units, budget %d, in %s\n", suite.name,
        #suite.tasks, #policies, #units, budget, files.display(opts.runs)))
    end
    local line = not a.quiet and require("klineage.progress").line(io.stderr, { budget = { used = 0 } }) or nil
    local deadline = a.seconds and host.clock() + a.seconds
    local results, t0, complete = {}, host.clock(), true
    if not a.json then
      print(string.format("%-18s %-10s %4s %5s %6s %8s %-14s %5s %6s %9s  %s", "task", "policy", "seed", "steps", "cycles",
        "speedup", "interval", "to90", "to90b", "recheck", "stopped"))
    end
    for i, u in ipairs(units) do
      -- Past the deadline no unit starts, but every finished one is still read (the table from the journals alone).
      local finished = eval.finished(opts, u.task, u.policy, u.seed)
      if not finished and deadline and host.clock() >= deadline then
        complete = false
      else
        if line then line:show(string.format("eval unit %d of %d: %s, %s", i, #units, u.task.name, u.policy),
          string.format("%.0f s", host.clock() - t0)) end
        results[#results + 1] = finished or eval.unit(opts, u.task, u.policy, u.seed)
      end
    end
    if line then line:done() end
    opts.suite = suite.name
    local jok, jf = eval.journal_units(opts, { "klineage", "eval", table.unpack(argv) }, results)
    if not jok then io.stderr:write("klineage eval: the eval's journal could not be written: ", tostring(jf.message or jf), "\n") end
    local rows = eval.aggregate(results)
    if a.json then
      print((require("cjson").encode({ suite = suite.name, units = results, policies = rows, complete = complete }):gsub("\\/", "/")))
      return 0
    end
    for _, r in ipairs(results) do print_unit(r) end
    print()
    print(string.format("%-12s %5s %8s %7s %7s %6s %8s %6s %8s", "policy", "units", "geomean", "fast_1", "fast_2", "to90",
      "to90best", "wrong", "seconds"))
    for _, r in ipairs(rows) do
      if r.not_run then
        print(string.format("%-12s %5d  not run: %s", r.policy, r.units, r.not_run))
      else
        print(string.format("%-12s %5d %8s %7s %7s %6s %8s %6d %8.0f", r.policy, r.units, x(r.geomean), pct(r.fast1), pct(r.fast2),
          num(r.to90), num(r.to90_best), r.wrong, r.seconds))
      end
    end
    print()
    if not complete then print(string.format("(%d of %d units are finished: run the same command again to go on)", #results, #units)) end
    local wrong = 0
    for _, r in ipairs(rows) do
      wrong = wrong + r.wrong
      if r.not_run then
        print(string.format("eval-%s-geomean: not run", r.policy))
      else
        print(string.format("eval-%s-geomean: %s x", r.policy, r.geomean and string.format("%.2f", r.geomean) or "-"))
        print(string.format("eval-%s-cycles-to-90: %s cycles", r.policy, num(r.to90)))
      end
    end
    print("eval-wrong-accepted: " .. wrong .. " kernels")
    if jok then require("klineage.report").after_run("eval", opts.runs, a.quiet) end
    return 0
  end,
}
