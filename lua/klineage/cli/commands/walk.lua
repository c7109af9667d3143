local args = require "klineage.base.args"
local exit_codes = require "klineage.base.exit_codes"

local llm_mod = require "klineage.llm"

local slurm_options = require "klineage.slurm.options"

local walk = require "klineage.search.walk"

local FLAGS = slurm_options.add_flags(walk.flags())

-- klineage walk W1,W2|lineages --slurm --policy P1,P2: one unit per (lineage, policy), each a walk of its own.
local function on_slurm(a, slurm)
  if a.resume then args.usage_error("--resume has no meaning with --slurm (give the same --run again)") end
  if a.json then args.usage_error("--json has no meaning with --slurm") end
  if a.run and not (a.run:match("^[%w_.%-]+$") and require("klineage.store.runs").check_name(a.run)) then
    args.usage_error("--run takes a plain name ([A-Za-z0-9_.-], not . or ..)")
  end
  local names = {}
  local ref = a.positional[1]
  if ref == "lineages" then
    names = table.move(require("klineage.eval").LINEAGES, 1, 7, 1, {})
  else
    for n in ref:gmatch("[^,]+") do names[#names + 1] = n end
  end
  for _, n in ipairs(names) do
    local w = require("klineage.cli").load_workload(n)
    if not w.lineage or #w.lineage == 0 then args.usage_error("the workload %s has no lineage to walk", w.name) end
  end
  local policies = {}
  for p in (a.policy or "greedy"):gmatch("[^,]+") do
    local ok, pf = require("klineage.search").load_policy(p, "backward")
    if not ok then args.usage_error("%s", pf.message) end
    policies[#policies + 1] = p
  end
  local root, rf = require("klineage.store.runs").root(a.journal)
  if not root then args.usage_error("%s", rf.message) end
  local submit = require "klineage.slurm.submit"
  local run = submit.absolute(root .. "/" .. (a.run or ("walks-" .. (a.backend or "default"))))
  local units = require("klineage.slurm.walk_units").units(names, policies, a, FLAGS, run)
  return submit.walk({ run = run, options = slurm, units = units, backend = a.backend }, a.quiet)
end

local function fmt_effect(e)
  if not e then return "" end
  if not e.measured then return e.why or "not measured" end
  local ci = e.ci and string.format(" [%.3f, %.3f]", e.ci[1] or e.ci.lo or 0, e.ci[2] or e.ci.hi or 0) or ""
  return string.format("%.3fx%s %s", e.speedup or 0, ci, e.outcome or "")
end

-- A step's schedule delta in a few words: what the optimization is in
-- kernel-IR primitives, or the first reason none accounts for it.
local function fmt_delta(d)
  if type(d) ~= "table" then return "" end
  if d.explained then return (d.how == "kir" and "kir: " or "") .. tostring(d.text) end
  local why = d.unexplained and d.unexplained[1] or "?"
  return "no: " .. tostring(why)
end

local function fmt_explained(x)
  if not x then return "" end
  if not x.explained then return "unexplained" end
  local names = {}
  for _, c in ipairs(x.chain or {}) do names[#names + 1] = c.transform end
  return x.how .. " by " .. table.concat(names, "+")
end

-- The walk's events on the progress line (cli/progress.lua; nothing off a
-- terminal): the candidate being judged, the step's best so far (the
-- accepted candidate slowest at the bench size, which the greedy policy
-- tries first; on emu, which times nothing, how many were accepted), the
-- kernel the walk is at and the largest measured effect of its steps; and
-- each step taken as a line that stays.
local function progress_printer(line)
  local at, top, accepted, slowest, slowest_ms
  local function best()
    local parts = {}
    if slowest then
      parts[#parts + 1] = string.format("slowest ok %s %.4f ms", slowest, slowest_ms)
    elseif accepted and accepted > 0 then
      parts[#parts + 1] = string.format("%d accepted", accepted)
    end
    parts[#parts + 1] = "at " .. tostring(at) .. (top and string.format(", top effect %.3fx (step %d)", top.speedup, top.step) or "")
    return table.concat(parts, "; ")
  end
  return function(e)
    if e.kind == "begin" then
      at, accepted, slowest, slowest_ms = e.current, 0, nil, nil
      line:show(string.format("walk step %d", e.step), best())
    elseif e.kind == "candidate" then
      line:show(string.format("walk step %d: %d/%d %s ...", e.step, e.index, e.of, e.label), best())
    elseif e.kind == "verdict" then
      if e.verdict == "ok" then
        accepted = accepted + 1
        if e.median_ms and (not slowest_ms or e.median_ms > slowest_ms) then slowest, slowest_ms = e.label, e.median_ms end
      end
      line:show(string.format("walk step %d: %d/%d %s %s", e.step, e.index, e.of, e.label, e.verdict), best())
    elseif e.kind == "step" then
      local eff = e.taken.effect
      if eff and eff.measured and eff.speedup and (not top or eff.speedup > top.speedup) then
        top = { speedup = eff.speedup, step = e.step }
      end
      line:say(string.format("step %d  took %s  %s", e.step, e.taken.to, fmt_effect(eff)))
    elseif e.kind == "end" then
      line:done()
    end
  end
end

return {
  flags = FLAGS,
  summary = "walk an expert kernel backward, one gate-validated simplification at a time",
  usage = "usage: klineage walk WORKLOAD [--policy recorded|greedy|breadth|FILE.lua] [--budget N] [--backend cuda|emu] "
    .. "[--max-steps N] [--run NAME | --resume RUN] [--journal DIR] [--json] [--quiet] " .. llm_mod.USAGE
    .. " | klineage walk W1,W2|lineages --slurm [--policy P1,P2] " .. slurm_options.USAGE,
  help = [[
Walks the workload's expert kernel (its lineage's last version) backward.
At each step the policy asks the proposers for candidate simplifications
(the undo of every transform at every site, the expert's previous version,
each hunk of the recorded step reverted alone), the gate judges them, and
the policy follows one that passes. Every judgement, step and piece of
evidence goes to the run's journal; a step's effect is the optimization's
speedup (current over simpler) by the interleaved compare on cuda, and "not
measured" on emu, which times nothing.

Each step taken is also read as a schedule delta (see klineage deltas): the
kernel-IR primitives that turn the simpler kernel into the one before it,
or why none does ("double buffering: no primitive"); the table's last
column, journaled with the step, and the last line
"schedule-deltas-explained: N/M steps". It is static: no gate cycle.

Policies (the backward ones of lua/klineage/search/policies/, or your own
file; see examples/policies/smallest_step.lua):
  recorded  the expert's history backward, each version validated, timed
            against the next, and explained by the transforms whose undo
            reproduces it
  greedy    every undo and hunk judged; follow the one slowing the kernel most
  breadth   every candidate judged and timed; all kept as evidence

On a terminal, stderr shows one line rewritten in place: the candidate
being judged, the step's best so far (the accepted candidate slowest at the
bench size; on emu, which times nothing, how many were accepted), the
kernel the walk is at with the largest measured effect so far, the gate
cycles used ("12/30" with --budget) and the elapsed time; each step taken
stays as a line "step N  took ...". KLINEAGE_PROGRESS=1 shows them off a
terminal too, KLINEAGE_PROGRESS=0 never; the line is cut to $COLUMNS (else
100) columns.

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
  --quiet             no progress lines
the llm proposer (greedy and breadth ask it for one simplification a step):
]] .. llm_mod.HELP .. [[


With --slurm, WORKLOAD may be a comma list (or "lineages", all seven) and
--policy a comma list: one unit per (lineage, policy), each the walk of its
own run folder RUN/<lineage>-<policy>-<backend> (RUN: --run NAME under the
runs folder, default walks-<backend>), then the skill repository learned
from it; the merge job pools them with the skills merge into RUN/skills.

]] .. slurm_options.HELP,
  run = function(argv)
    local a = args.parse(argv, { flags = FLAGS, min = 1, max = 1 })
    local slurm = slurm_options.from_args(a, a.backend)
    if a.slurm then return on_slurm(a, slurm) end
    local files = require "klineage.base.files"
    local w = require("klineage.cli").load_workload(a.positional[1])
    if not w.lineage or #w.lineage == 0 then args.usage_error("the workload %s has no lineage to walk", w.name) end
    walk.check(a)
    local line
    local summary, f, failed_dir = walk.run(w, a, argv, { opened = function(ctx, policy)
      if not a.quiet then
        io.stderr:write(string.format("klineage walk: %s from %s, policy %s, %s backend%s\n", w.name, w.lineage[#w.lineage],
          policy.name, ctx.backend, ctx.run and (", journal in " .. files.display(ctx.run.dir)) or ""))
      end
      line = require("klineage.cli.progress").line(io.stderr, ctx, { tty = a.quiet and false or nil })
      return line.on and progress_printer(line) or nil
    end })
    if not line then -- the run context did not open
      io.stderr:write(string.format("klineage walk: %s\n", require("klineage.base.term").text(f.message)))
      return exit_codes.of(f, "open_run")
    end
    line:done() -- a walk that raised sent no "end"
    local run_dir = summary and summary.run or failed_dir
    -- The report before the summary, so that the summary stays the last output.
    require("klineage.report").after_run("walk", run_dir, a.quiet)
    if not summary then
      io.stderr:write("klineage walk: ", require("klineage.base.term").text(f), "\n")
      return exit_codes.of(f)
    end
    if a.json then
      -- lua-cjson writes an empty table as {}: a walk of no steps has steps [].
      local json = require("klineage.base.stable_json").encode(summary):gsub("\\/", "/"):gsub('"steps":{}', '"steps":[]')
      print(json)
      return exit_codes.of("ok")
    end
    io.stdout:write(string.format("%s, policy %s, %s backend: %d steps, %d gate cycles, %.1f s; stopped: %s\n", require("klineage.base.term").text(w.name),
      summary.policy, summary.backend, #summary.steps, summary.cycles, summary.seconds, require("klineage.base.term").text(summary.stopped)))
    local term = require "klineage.base.term"
    io.stdout:write(string.format("%-4s %-34s %-34s %-30s %-30s %s\n", "step", "from", "to", "effect", "explained", "schedule delta"))
    for _, s in ipairs(summary.steps) do
      io.stdout:write(string.format("%-4d %-34s %-34s %-30s %-30s %s\n", s.step, term.text(s.from:sub(1, 34)), term.text(s.to:sub(1, 34)),
        fmt_effect(s.effect):sub(1, 30), fmt_explained(s.explained), term.text(fmt_delta(s.delta):sub(1, 100))))
    end
    local sd = summary.schedule_deltas or { explained = 0, total = 0 }
    io.stdout:write(string.format("schedule-deltas-explained: %d/%d steps\n", sd.explained, sd.total))
    if run_dir then io.stdout:write("journal: ", files.display(run_dir), "\n") end
    return exit_codes.of("ok") -- whatever it found, and wherever it stopped (the budget included)
  end,
}
