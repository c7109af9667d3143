-- klineage slurm: the units of an eval or walks submitted with --slurm
-- (unit, merge, status, resubmit). Bad input exits 2 with one line; a
-- Slurm command's failure is said as it printed it, and exits 1.
local args = require "klineage.base.args"
local exit_codes = require "klineage.base.exit_codes"

local FLAGS = { json = "boolean", dry_run = "boolean", quiet = "boolean", journal = "string" }

local function fail(fmt, ...) args.usage_error(fmt, ...) end

local function plan_of(a, what)
  local ref = a.positional[2]
  if not ref then fail("klineage slurm %s needs RUN (the run folder given to --slurm, or its name)", what) end
  local splan, f = require("klineage.slurm.folder").read_plan(ref, a.journal)
  if not splan then fail("%s", f.message) end
  return splan
end

-- klineage slurm unit RUN INDEX: what one array task runs.
local function unit(a)
  local splan = plan_of(a, "unit")
  local index = math.tointeger(tonumber(a.positional[3] or ""))
  if not index then fail("klineage slurm unit needs RUN and the unit's INDEX ($SLURM_ARRAY_TASK_ID)") end
  if index < 0 or index >= #splan.units then fail("no unit %d: %s has units 0 to %d", index, splan.run, #splan.units - 1) end
  local host = require "kl.host"
  -- The start, for submission-to-start latencies (the monotonic clock: one node's).
  io.stdout:write(string.format("klineage slurm unit %d %s: start, clock %.3f s, job %s\n", index, splan.units[index + 1].name,
    host.clock(), os.getenv("SLURM_ARRAY_JOB_ID") and (os.getenv("SLURM_ARRAY_JOB_ID") .. "_" .. (os.getenv("SLURM_ARRAY_TASK_ID") or "?")) or "-"))
  io.stdout:flush()
  local code = require("klineage.slurm.status").kind(splan).run(splan, index)
  io.stdout:write(string.format("klineage slurm unit %d: end, exit %d, clock %.3f s\n", index, code, host.clock()))
  return code
end

local function merge(a)
  local splan = plan_of(a, "merge")
  local host = require "kl.host"
  local t0 = host.clock()
  local done, f = require("klineage.slurm.status").kind(splan).merge(splan)
  if not done then
    io.stderr:write("klineage slurm merge: ", tostring(f), "\n")
    return exit_codes.of(f)
  end
  if not a.quiet then io.stdout:write(done.text) end
  io.stderr:write(string.format("klineage slurm merge: %d of %d units finished, merged in %.3f s into %s\n", done.finished, done.of,
    host.clock() - t0, table.concat(done.files, ", ")))
  if done.finished < done.of then
    io.stderr:write(string.format("klineage slurm merge: see klineage slurm status %s; klineage slurm resubmit %s sends the rest again\n",
      splan.run, splan.run))
  end
  return exit_codes.of("ok")
end

local function print_rows(rows, info)
  local counts = {}
  io.stdout:write(string.format("%-5s %-44s %-9s %-10s %s\n", "index", "unit", "state", "job", "detail"))
  for _, r in ipairs(rows) do
    counts[r.state] = (counts[r.state] or 0) + 1
    local detail = r.detail or ""
    if r.log then detail = (detail ~= "" and detail .. "; " or "") .. "log " .. r.log end
    io.stdout:write(string.format("%-5d %-44s %-9s %-10s %s\n", r.index, r.name, r.state, r.job or "-", detail))
  end
  local parts = {}
  for _, s in ipairs({ "finished", "running", "pending", "failed", "missing" }) do
    if counts[s] then parts[#parts + 1] = string.format("%d %s", counts[s], s) end
  end
  io.stdout:write(table.concat(parts, ", "), " of ", #rows, " units\n")
  if info.accounting ~= true then io.stderr:write("accounting: not available (sacct: ", tostring(info.accounting), ")\n") end
end

-- The run's plan and its units' states, or nil after saying why.
local function units_of(a, what)
  local splan = plan_of(a, what)
  local rows, info = require("klineage.slurm.status").units(splan)
  if not rows then io.stderr:write("klineage slurm ", what, ": ", info.message, "\n") end
  return splan, rows, info
end

local function status(a)
  local splan, rows, info = units_of(a, "status")
  if not rows then return exit_codes.of(info) end
  if a.json then
    io.stdout:write((require("klineage.base.stable_json").encode({ run = splan.run, units = rows, accounting = info.accounting }):gsub("\\/", "/")), "\n")
    return exit_codes.of("ok")
  end
  print_rows(rows, info)
  return exit_codes.of("ok")
end

local function resubmit(a)
  local splan, rows, info = units_of(a, "resubmit")
  if not rows then return exit_codes.of(info) end
  local indices, busy = {}, 0
  for _, r in ipairs(rows) do
    if r.state == "failed" or r.state == "missing" then indices[#indices + 1] = r.index end
    if r.state == "running" or r.state == "pending" then busy = busy + 1 end
  end
  if busy > 0 then
    io.stderr:write(string.format("klineage slurm resubmit: %d units are still running or pending; they are left to their job\n", busy))
  end
  if #indices == 0 then
    io.stdout:write("nothing to resubmit: no unit failed or is missing\n")
    return exit_codes.of("ok")
  end
  local submit = require "klineage.slurm.submit"
  if a.dry_run then
    submit.print_dry_run(splan, indices)
    return exit_codes.of("ok")
  end
  local jobs, f = submit.jobs(splan, indices)
  if jobs and jobs.merge and not f and not a.quiet then
    local names = {}
    for _, i in ipairs(indices) do names[#names + 1] = splan.units[i + 1].name end
    io.stdout:write(string.format("resubmitted %d units (%s) as job array %s, and the merge as job %s\n", #indices,
      table.concat(names, ", "), jobs.array, jobs.merge))
    return exit_codes.of("ok")
  end
  return submit.report("slurm resubmit", splan, jobs, f, a.quiet)
end

local SUB = { unit = unit, merge = merge, status = status, resubmit = resubmit }

return {
  flags = FLAGS,
  summary = "the units of an eval or walks on Slurm: status, resubmit, merge (and the unit an array task runs)",
  usage = "usage: klineage slurm status|resubmit|merge RUN [--json] [--dry-run] [--quiet] [--journal DIR] | klineage slurm unit RUN INDEX",
  help = [[
For the runs that `klineage eval ... --slurm` and `klineage walk ...
--slurm` submitted. RUN is the run folder (a path, or its name under the
runs folder). It holds slurm/units.json (the units, one per array index),
the batch scripts, slurm/jobs.jsonl (every job submitted) and the logs
(slurm/logs/unit-INDEX-JOB.out).

  status RUN     each unit's state: finished (its result is in the folder),
                 running or pending (squeue), failed (it started, its log or
                 folder is there, and it is neither finished nor queued) or
                 missing (it never started). sacct's state is shown when
                 accounting answers; without it (no slurmdbd) status works
                 from squeue and the folder alone
  resubmit RUN   a new job array of only the failed and missing units (same
                 indices), and a new merge job after it; a unit killed
                 midway resumes from its journal, so no gate cycle is paid
                 twice; --dry-run prints the script and the units instead
  merge RUN      what the merge job runs, and by hand: an eval's journal,
                 table.txt and report, from the units' result.json files; the
                 walks' skill repositories merged into RUN/skills and
                 RUN/walks.txt. Deterministic: the same unit results give the
                 same bytes, in whatever order the units finished (canonical
                 JSON in the eval's unit order, no clock of the merge's own)
  unit RUN INDEX what an array task runs: unit INDEX of the plan

options:
  --json         status: the rows as JSON
  --dry-run      resubmit: print, submit nothing
  --quiet        merge: no table on stdout; resubmit: no summary line
  --journal DIR  the runs folder, for a RUN given by name]],
  run = function(argv)
    local a = args.parse(argv, { flags = FLAGS, min = 1, max = 3 })
    local sub = SUB[a.positional[1]]
    if not sub then fail("unknown subcommand '%s' (status, resubmit, merge or unit)", a.positional[1]) end
    if a.positional[1] ~= "unit" and a.positional[3] then fail("unexpected argument '%s'", a.positional[3]) end
    return sub(a)
  end,
}
