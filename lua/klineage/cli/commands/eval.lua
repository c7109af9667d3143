local args = require "klineage.base.args"
local exit_codes = require "klineage.base.exit_codes"
local llm_mod = require "klineage.llm"
local plan_mod = require "klineage.eval.plan"
local slurm_options = require "klineage.slurm.options"

local FLAGS = slurm_options.add_flags(plan_mod.FLAGS)

return {
  flags = FLAGS,
  summary = "evaluate policies (klineage and the baselines) on a suite under the same gate and budget",
  usage = "usage: klineage eval SUITE [--budget 30] [--policies klineage,forward,memory,random] [--leave-one-out] "
    .. "[--seeds N] [--learn-from RUN]... [--skills DIR] [--tasks a,b] [--backend cuda|emu] [--journal DIR] [--run NAME] "
    .. "[--seconds S] " .. llm_mod.USAGE .. " [--json] [--quiet] " .. slurm_options.USAGE,
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
  --policies LIST    klineage (then, on cuda, the skills held back by
                     conditions learned from slowdowns), klineage_explore
                     (the same candidates with no patience), the
                     baselines (forward, random, memory, llm-only) or
                     policy files (default klineage)
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
  --quiet            no progress line

With --slurm, each unit is one task of a Slurm job array (klineage slurm
unit), its folder under the eval's folder as here; a merge job then writes
the eval's journal, table.txt and report (klineage slurm merge). Watch it
with klineage slurm status, and send what failed again with klineage slurm
resubmit. With --learn-from, the observations are extracted once, when it
is submitted (RUN/slurm/observations.lua), not by every unit.

]] .. slurm_options.HELP,
  run = function(argv)
    local a = args.parse(argv, { flags = FLAGS, min = 1, max = 1 })
    local eval = require "klineage.eval"
    local files = require "klineage.base.files"
    local host = require "kl.host"
    local term = require "klineage.base.term"
    local slurm = slurm_options.from_args(a, a.backend)
    if a.slurm and (a.seconds or a.json) then args.usage_error("--%s has no meaning with --slurm", a.seconds and "seconds" or "json") end
    local plan = plan_mod.from_args(a)
    local suite, opts, units = plan.suite, plan.opts, plan.units
    if a.slurm then
      return require("klineage.slurm.submit").eval(plan, slurm_options.unit_argv(argv), slurm, a.quiet)
    end
    local made, merr = require("kl.proc").mkdir_p(opts.runs)
    if not made then
      io.stderr:write("klineage eval: cannot make the eval's folder ", files.display(opts.runs), ": ", term.text(merr), "\n")
      return exit_codes.of("io_error", "open_run")
    end
    -- One eval at a time on a folder: two would judge (and charge) every unit twice.
    local lock <close>, lf = require("klineage.store.runlock").acquire(opts.runs)
    if not lock then
      io.stderr:write("klineage eval: ", term.text(lf.message), "\n")
      return exit_codes.of(lf, "open_run")
    end
    if not a.quiet then
      io.stderr:write(string.format("klineage eval: %s, %d tasks x %d policies = %d units, budget %d, in %s\n", term.text(suite.name),
        #suite.tasks, #plan.policies, #units, opts.budget, files.display(opts.runs)))
    end
    -- The line's cycles: those the units read or run so far charged.
    local cycles = 0
    local line = not a.quiet and require("klineage.cli.progress").line(io.stderr, { spent = function() return cycles end }) or nil
    local deadline = a.seconds and host.clock() + a.seconds
    local results, t0, complete = {}, host.clock(), true
    for i, u in ipairs(units) do
      -- Past the deadline no unit starts, but every finished one is still read (the table from the journals alone).
      local finished = eval.finished(opts, u.task, u.policy, u.seed) or eval.cannot_run(opts, u.task, u.policy, u.seed)
      if not finished and deadline and host.clock() >= deadline then
        complete = false
      else
        if line then line:show(string.format("eval unit %d of %d: %s, %s", i, #units, u.task.name, u.policy),
          string.format("%.0f s", host.clock() - t0)) end
        results[#results + 1] = finished or eval.unit(opts, u.task, u.policy, u.seed)
        cycles = cycles + (math.tointeger(results[#results].cycles) or 0)
      end
    end
    if line then line:done() end
    local jok, jf = eval.journal_units(opts, { "klineage", "eval", table.unpack(argv) }, results)
    if not jok then io.stderr:write("klineage eval: the eval's journal could not be written: ", term.text(jf.message or jf), "\n") end
    local rows = eval.aggregate(results)
    if a.json then
      print((require("klineage.base.stable_json").encode({ suite = suite.name, units = results, policies = rows, complete = complete }):gsub("\\/", "/")))
      return exit_codes.of("ok")
    end
    -- task names are folder names, and the table quotes failures: outside text
    io.stdout:write(term.text(require("klineage.eval.table").text(results, rows,
      not complete and { finished = #results, of = #units } or nil), true))
    if jok then require("klineage.report").after_run("eval", opts.runs, a.quiet) end
    -- Every unit's verdict is a row of the table, whatever it is: the eval
    -- ran (a spent budget, a --seconds stop and a rejected kernel included).
    return exit_codes.of("ok")
  end,
}
