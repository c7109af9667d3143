local args = require "klineage.args"

local FLAGS = { policy = "string", budget = "number", backend = "string", max_steps = "number", resume = "string",
                run = "string", journal = "string", json = "boolean", quiet = "boolean" }

local function fmt_effect(e)
  if not e then return "" end
  if not e.measured then return e.why or "not measured" end
  local ci = e.ci and string.format(" [%.3f, %.3f]", e.ci[1] or e.ci.lo or 0, e.ci[2] or e.ci.hi or 0) or ""
  return string.format("%.3fx%s %s", e.speedup or 0, ci, e.outcome or "")
end

local function fmt_explained(x)
  if not x then return "" end
  if not x.explained then return "unexplained" end
  local names = {}
  for _, c in ipairs(x.chain or {}) do names[#names + 1] = c.transform end
  return x.how .. " by " .. table.concat(names, "+")
end

-- A progress line per event on a terminal; nothing otherwise.
local function progress_printer(out)
  local host = require "kl.host"
  if not host.isatty(2) then return nil end
  return function(e)
    local budget = e.budget.limit and string.format("%d/%d", e.budget.used, e.budget.limit) or tostring(e.budget.used)
    if e.kind == "candidate" then
      out:write(string.format("\r\27[Kstep %d  candidate %d/%d  %s  cycles %s", e.step, e.index, e.of, e.label:sub(1, 50), budget))
    elseif e.kind == "verdict" then
      out:write(string.format("\r\27[Kstep %d  candidate %d/%d  %s: %s  cycles %s", e.step, e.index, e.of, e.label:sub(1, 50),
        e.verdict, budget))
    elseif e.kind == "step" then
      out:write(string.format("\r\27[Kstep %d  took %s  %s\n", e.step, e.taken.to, fmt_effect(e.taken.effect)))
    elseif e.kind == "end" then
      out:write("\r\27[K")
    end
    out:flush()
  end
end

return {
  flags = FLAGS,
  summary = "walk an expert kernel backward, one gate-validated simplification at a time",
  usage = "usage: klineage walk WORKLOAD [--policy recorded|greedy|breadth|FILE.lua] [--budget N] [--backend cuda|emu] "
    .. "[--max-steps N] [--run NAME | --resume RUN] [--journal DIR] [--json] [--quiet]",
  help = [[
Walks the workload's expert kernel (its lineage's last version) backward.
At each step the policy asks the proposers for candidate simplifications
(the undo of every transform at every site, the expert's previous version,
each hunk of the recorded step reverted alone), the gate judges them, and
the policy follows one that passes. Every judgement, step and piece of
evidence goes to the run's journal; a step's effect is the optimization's
speedup (current over simpler) by the interleaved compare on cuda, and "not
measured" on emu, which times nothing.

Policies (lua/klineage/walk/policies/, or your own file; see
examples/walk_smallest_step.lua):
  recorded  the expert's history backward, each version validated, timed
            against the next, and explained by the transforms whose undo
            reproduces it
  greedy    every undo and hunk judged; follow the one slowing the kernel most
  breadth   every candidate judged and timed; all kept as evidence

A killed walk resumes with --resume RUN (or --run NAME again): every
judgement already in the journal is reused and no gate cycle is paid twice.

At its end the walk writes the run's report, RUN/report.md and
RUN/report.html (see klineage report; --quiet leaves out the line naming
it); a report that cannot be rendered is said on stderr and changes
nothing else.

Exit code: 0 when the walk ran (whatever it found), 1 when it stopped on a
failure of the engine, 2 for bad input.

options:
  --policy NAME|FILE  recorded, greedy (default) or breadth, or a policy file
  --budget N          gate cycles the walk may spend (default: no limit)
  --backend NAME      cuda (default where a GPU answers) or emu
  --max-steps N       steps at most (default 40)
  --run NAME          the run folder's name: created, or resumed when it exists
  --resume RUN        resume this run (an id under the runs folder, or a path)
  --journal DIR       the runs folder (default $KLINEAGE_RUNS, ...)
  --json              print the walk's summary as JSON
  --quiet             no progress lines]],
  run = function(argv)
    local a = args.parse(argv, { flags = FLAGS, min = 1, max = 1 })
    local files = require "klineage.files"
    local walk = require "klineage.walk"
    local w = require("klineage.cli").load_workload(a.positional[1])
    if not w.lineage or #w.lineage == 0 then args.usage_error("the workload %s has no lineage to walk", w.name) end
    local budget = a.budget
    if budget and (math.type(budget) ~= "integer" or budget < 0) then args.usage_error("--budget needs a whole number >= 0") end
    local max_steps = a.max_steps
    if max_steps and (math.type(max_steps) ~= "integer" or max_steps < 1) then args.usage_error("--max-steps needs a whole number >= 1") end
    if a.run and a.resume then args.usage_error("give --run or --resume, not both") end
    if a.run and not a.run:match("^[%w_.%-]+$") then args.usage_error("--run takes a plain name ([A-Za-z0-9_.-])") end
    local policy, pf = walk.load_policy(a.policy or "greedy")
    if not policy then args.usage_error("%s", pf.message) end
    local resume = a.resume
    local runs = require "klineage.runs"
    local create_id
    if a.run then
      if runs.find(a.run, a.journal) then resume = a.run else create_id = a.run end
    end
    local ctx, cerr = require("klineage.context").new { backend = a.backend, journal = a.journal, resume = resume,
      run_id = create_id, budget = budget, command = { "klineage", "walk", table.unpack(argv) }, workloads = { w } }
    if not ctx then
      io.stderr:write("klineage walk: ", cerr.message, "\n")
      return (cerr.verdict == "bad_input" or cerr.verdict == "io_error") and 2 or 1
    end
    if not a.quiet then
      io.stderr:write(string.format("klineage walk: %s from %s, policy %s, %s backend%s\n", w.name, w.lineage[#w.lineage],
        policy.name, ctx.backend, ctx.run and (", journal in " .. files.display(ctx.run.dir)) or ""))
    end
    local summary, f = require("klineage.verdicts").catch(walk.run, ctx, w, { policy = policy, max_steps = max_steps,
      progress = not a.quiet and progress_printer(io.stderr) or nil })
    local run_dir = ctx.run and ctx.run.dir
    ctx:close()
    -- The report before the summary, so that the summary stays the last output.
    require("klineage.report").after_run("walk", run_dir, a.quiet)
    if not summary then
      io.stderr:write("klineage walk: ", tostring(f), "\n")
      return f.verdict == "bad_input" and 2 or 1
    end
    summary.run = run_dir
    if a.json then
      -- lua-cjson writes an empty table as {}: a walk of no steps has steps [].
      local json = require("cjson").encode(summary):gsub("\\/", "/"):gsub('"steps":{}', '"steps":[]')
      print(json)
      return 0
    end
    io.stdout:write(string.format("%s, policy %s, %s backend: %d steps, %d gate cycles, %.1f s; stopped: %s\n", w.name,
      summary.policy, summary.backend, #summary.steps, summary.cycles, summary.seconds, summary.stopped))
    io.stdout:write(string.format("%-4s %-34s %-34s %-30s %s\n", "step", "from", "to", "effect", "explained"))
    for _, s in ipairs(summary.steps) do
      io.stdout:write(string.format("%-4d %-34s %-34s %-30s %s\n", s.step, s.from:sub(1, 34), s.to:sub(1, 34),
        fmt_effect(s.effect):sub(1, 30), fmt_explained(s.explained)))
    end
    if run_dir then io.stdout:write("journal: ", files.display(run_dir), "\n") end
    return 0
  end,
}
