-- The Slurm side of a run folder: RUN/slurm/ holds what was split and
-- what was submitted, so that status, resubmit and merge need nothing
-- but the folder.
--
--   RUN/slurm/units.json     the plan: { schema = 1, kind = "eval" | "walk", run (the
--                            folder, absolute), cwd (where units start), argv (eval: the
--                            eval's command line every unit rebuilds its plan from),
--                            options (klineage.slurm.options), units = { { index, name
--                            [, argv (walk: the unit's own command line)] }... } }
--   RUN/slurm/array-K.sh     the K-th array job's batch script (K = 1, 2, ...)
--   RUN/slurm/merge-K.sh     the merge job that follows it
--   RUN/slurm/jobs.jsonl     one record per submitted job: { kind = "array", job, indices,
--                            script } or { kind = "merge", job, after } (klineage.store.journal)
--   RUN/slurm/logs/          unit-INDEX-JOB.out and merge-JOB.out (sbatch --output)
--
--   folder.write_plan(plan) -> path | nil, failure (io_error)
--   folder.read_plan(ref [, root]) -> plan | nil, failure (bad_input: not a Slurm run)
--       ref: a folder path, or a run name under the runs folder
--   folder.jobs(run) -> { record... } (none yet: {})
--   folder.record_job(run, record) -> true | nil, failure
--   folder.next_script(run, what) -> path of the next unused RUN/slurm/<what>-K.sh, K
local cjson = require "cjson"
local files = require "klineage.base.files"
local journal = require "klineage.store.journal"
local runs = require "klineage.store.runs"
local verdicts = require "klineage.base.verdicts"
local proc = require "kl.proc"

local M = {}

M.SCHEMA = 1

function M.write_plan(plan)
  local dir = plan.run .. "/slurm"
  local ok, err = proc.mkdir_p(dir .. "/logs")
  if not ok then return nil, verdicts.failure("io_error", string.format("cannot make %s: %s", files.display(dir), tostring(err))) end
  local path = dir .. "/units.json"
  local wok, wf = files.write_atomic(path, runs.canonical_json(plan) .. "\n")
  if not wok then return nil, wf end
  return path
end

local function resolve(ref, root)
  if ref:find("/", 1, true) or ref == "." then return (ref:gsub("/+$", "")) end
  local r, f = runs.root(root)
  if not r then return nil, f end
  return r .. "/" .. ref
end

function M.read_plan(ref, root)
  if type(ref) ~= "string" or ref == "" then error("folder.read_plan: a run folder expected", 2) end
  local dir, f = resolve(ref, root)
  if not dir then return nil, f end
  local text = files.read_text(dir .. "/slurm/units.json")
  if not text then
    return nil, verdicts.failure("bad_input", string.format("%s is not a Slurm run (no slurm/units.json; see klineage eval --slurm)",
      files.display(dir)))
  end
  local ok, plan = pcall(cjson.decode, text)
  if not ok or type(plan) ~= "table" or plan.schema ~= M.SCHEMA or type(plan.units) ~= "table" then
    return nil, verdicts.failure("bad_input", files.display(dir) .. "/slurm/units.json is not a unit list of this klineage")
  end
  for _, u in ipairs(plan.units) do u.index = math.tointeger(u.index) end -- JSON numbers may come back as floats
  return plan
end

function M.jobs(run)
  return journal.read(run .. "/slurm/jobs.jsonl") or {}
end

function M.record_job(run, record)
  local j, f = journal.open(run .. "/slurm/jobs.jsonl")
  if not j then return nil, f end
  local ok, af = j:append(record)
  j:close()
  if not ok then return nil, af end
  return true
end

function M.next_script(run, what)
  local k = 1
  while true do
    if not require("kl.fs").stat(string.format("%s/slurm/%s-%d.sh", run, what, k)) then break end
    k = k + 1
  end
  return string.format("%s/slurm/%s-%d.sh", run, what, k), k
end

return M
