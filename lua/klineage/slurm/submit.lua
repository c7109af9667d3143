-- Splitting a command's work into units and submitting them: the plan to
-- RUN/slurm/units.json, one array job (one array task per unit index) and
-- a merge job after it (--dependency=afterany), both recorded in
-- RUN/slurm/jobs.jsonl. --dry-run prints the scripts and the units and
-- writes and submits nothing.
--
--   submit.eval(plan, unit_argv, options, quiet) -> exit code   (klineage eval --slurm)
--   submit.walk(splan, quiet) -> exit code                      (klineage walk --slurm)
--   submit.jobs(splan, indices) -> { array = job, merge = job } | nil, failure
--       writes the scripts and submits; used by resubmit too
--   submit.print_dry_run(splan, indices)
local args = require "klineage.base.args"
local batch = require "klineage.slurm.batch"
local folder = require "klineage.slurm.folder"
local scheduler = require "klineage.slurm.scheduler"
local files = require "klineage.base.files"

local M = {}

local function exe() return require("kl.host").executable() end

-- Paths that go on #SBATCH lines and into sbatch's %-patterns: plain ones only.
local function check_path(what, p)
  if not p:match("^/[%w_.,+=@/%-]*$") then
    args.usage_error("--slurm needs %s without blanks, quotes or %%: %s", what, files.display(p))
  end
end

local function cwd() return assert(require("kl.fs").realpath(".")) end

-- The folder as the nodes will see it: absolute (nothing is made here: a dry run writes nothing).
local function absolute(dir)
  dir = dir:gsub("/+$", "")
  if dir:sub(1, 1) ~= "/" then dir = cwd() .. "/" .. dir:gsub("^%./", "") end
  return dir
end

function M.print_dry_run(splan, indices)
  io.stdout:write(string.format("# the array job (%d units), written to %s/slurm/array-K.sh:\n", #indices, splan.run))
  io.stdout:write(batch.array_script(splan, indices, exe()))
  io.stdout:write("\n# then the merge job, once sbatch has given the array's job id (here JOB):\n")
  io.stdout:write(batch.merge_script(splan, "JOB", exe()))
  io.stdout:write("\n# the units (array index, name):\n")
  for _, i in ipairs(indices) do io.stdout:write(string.format("%d %s\n", i, splan.units[i + 1].name)) end
end

function M.jobs(splan, indices)
  local script = folder.next_script(splan.run, "array")
  local ok, f = files.write_atomic(script, batch.array_script(splan, indices, exe()))
  if not ok then return nil, f end
  local job, sf = scheduler.submit(script)
  if not job then return nil, sf end
  local rok, rf = folder.record_job(splan.run, { kind = "array", job = job, indices = indices, script = script })
  if not rok then return nil, rf end
  local mscript = folder.next_script(splan.run, "merge")
  ok, f = files.write_atomic(mscript, batch.merge_script(splan, job, exe()))
  if not ok then return { array = job }, f end
  local mjob, mf = scheduler.submit(mscript)
  if not mjob then return { array = job }, mf end
  rok, rf = folder.record_job(splan.run, { kind = "merge", job = mjob, after = job, script = mscript })
  if not rok then return { array = job, merge = mjob }, rf end
  return { array = job, merge = mjob }
end

local function all_indices(splan)
  local out = {}
  for i = 0, #splan.units - 1 do out[#out + 1] = i end
  return out
end

-- The jobs submitted, said; a failure after the array was submitted says
-- what was, and how to go on.
function M.report(command, splan, jobs, f, quiet)
  if jobs and jobs.array and jobs.merge and not f then
    if not quiet then
      io.stdout:write(string.format("submitted %d units of %s as job array %s, and the merge as job %s (after it)\n",
        #splan.units, files.display(splan.run), jobs.array, jobs.merge))
      io.stdout:write(string.format("watch: klineage slurm status %s\n", files.display(splan.run)))
    end
    return 0
  end
  io.stderr:write(string.format("klineage %s: %s\n", command, tostring(f and f.message or f)))
  if jobs and jobs.array then
    io.stderr:write(string.format("klineage %s: the array job %s was submitted; once it ends, merge by hand: klineage slurm merge %s\n",
      command, jobs.array, files.display(splan.run)))
  end
  return 1
end

local function start(command, splan, quiet)
  check_path("the run folder", splan.run)
  check_path("the current folder", splan.cwd)
  local indices = all_indices(splan)
  if splan.options.dry_run then
    M.print_dry_run(splan, indices)
    return 0
  end
  local first = splan.write_first -- what the units read, written before any can start
  splan.write_first = nil
  local ok, f = folder.write_plan(splan)
  if ok and first then ok, f = first() end
  if not ok then return M.report(command, splan, nil, f, quiet) end
  local jobs, jf = M.jobs(splan, indices)
  return M.report(command, splan, jobs, jf, quiet)
end

function M.eval(plan, unit_argv, options, quiet)
  local opts = plan.opts
  local run = absolute(opts.runs)
  local argv = table.move(unit_argv, 1, #unit_argv, 1, {})
  local root = run:match("^(.*)/[^/]+$")
  for _, w in ipairs({ "--journal", root, "--run", opts.eval, "--quiet" }) do argv[#argv + 1] = w end
  local units = {}
  for i, u in ipairs(plan.units) do units[i] = { index = i - 1, name = u.name } end
  local splan = { schema = folder.SCHEMA, kind = "eval", run = run, cwd = cwd(), argv = argv, options = options,
                  units = units, backend = opts.backend, budget = opts.budget, suite = opts.suite }
  if opts.observations then
    -- extracted once, here, rather than by every unit (klineage.slurm.observations)
    splan.observations = "slurm/observations.lua"
    splan.write_first = function()
      return require("klineage.slurm.observations").write(run .. "/slurm/observations.lua", opts.observations)
    end
  end
  return start("eval", splan, quiet)
end

function M.walk(splan, quiet)
  splan.schema, splan.kind, splan.cwd = folder.SCHEMA, "walk", cwd()
  return start("walk", splan, quiet)
end

M.absolute = absolute

return M
