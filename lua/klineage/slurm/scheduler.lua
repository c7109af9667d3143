-- Slurm through its commands on PATH (sbatch, squeue, sacct, scancel),
-- spawned by kl.proc: no Slurm library is linked. A command that cannot
-- start or exits non-zero is a slurm_error whose message is what it
-- printed on stderr, as it printed it (its last 2000 bytes).
--
--   scheduler.run(argv [, timeout = 60]) -> stdout | nil, failure (slurm_error)
--   scheduler.submit(script) -> job id (string) | nil, failure
--       sbatch --parsable SCRIPT: the script's #SBATCH lines say the rest
--   scheduler.queue() -> { [job] = { [index] = state } } | nil, failure
--       squeue's view of every array task still known to the controller
--       (-r: a pending array is one line per index); state is squeue's
--       (PENDING, RUNNING, COMPLETING, ...); a job that is no array has
--       index "N/A"
--   scheduler.accounting(jobs) -> { [job] = { [index] = state } } | nil, failure
--       sacct's final states of those jobs' array tasks; a failure when
--       accounting is off (a cluster without slurmdbd), which callers
--       treat as "no accounting", never as an error of the run
--   scheduler.cancel(job) -> true | nil, failure       scancel JOB (JOB_INDEX for one task)
local proc = require "kl.proc"
local verdicts = require "klineage.base.verdicts"

local M = {}

local function trim(s) return (s:gsub("^%s+", ""):gsub("%s+$", "")) end

function M.run(argv, timeout)
  timeout = timeout or 60
  local p, err = proc.spawn({ argv = argv })
  if not p then return nil, verdicts.failure("slurm_error", string.format("%s: %s", argv[1], err)) end
  p:close_stdin()
  local out, rerr = p:read_all(timeout)
  local status = out and p:wait(timeout)
  local stderr = trim(p:stderr() or "")
  p:close()
  if not out or not status then
    return nil, verdicts.failure("slurm_error", string.format("%s gave no answer within %g s%s", argv[1], timeout,
      rerr and rerr ~= "timeout" and (": " .. rerr) or ""))
  end
  if status.code ~= 0 then
    local how = status.signal and ("was killed by " .. status.signal) or ("exited with " .. status.code)
    if #stderr > 2000 then stderr = "..." .. stderr:sub(-2000) end
    local said = stderr ~= "" and stderr or trim(out)
    return nil, verdicts.failure("slurm_error", said ~= "" and said or (argv[1] .. " " .. how), { code = status.code })
  end
  return out
end

function M.submit(script)
  local out, f = M.run({ "sbatch", "--parsable", script })
  if not out then return nil, f end
  -- --parsable prints "JOB" or "JOB;CLUSTER"
  local job = out:match("^%s*(%d+)")
  if not job then return nil, verdicts.failure("slurm_error", "sbatch printed no job id: " .. trim(out)) end
  return job
end

-- "123_4" -> "123", "4"; "123_[5-7%2]" -> "123", "[5-7%2]"; "123" -> "123", "N/A"
local function split_id(id)
  local job, index = id:match("^(%d+)_(.+)$")
  if job then return job, index end
  return id:match("^(%d+)"), "N/A"
end

local function table_of(text)
  local by = {}
  for line in text:gmatch("[^\n]+") do
    local id, state = line:match("^%s*([^|]+)|([^|%s]+)")
    if id then
      local job, index = split_id(trim(id))
      if job then
        by[job] = by[job] or {}
        by[job][index] = state
      end
    end
  end
  return by
end

function M.queue()
  -- %i is JOB_INDEX for an array task (one line each with -r), %T the state's long name
  local out, f = M.run({ "squeue", "--noheader", "--array", "--format=%i|%T" })
  if not out then return nil, f end
  return table_of(out)
end

function M.accounting(jobs)
  if #jobs == 0 then return {} end
  local out, f = M.run({ "sacct", "--noheader", "--parsable2", "--allocations", "--jobs=" .. table.concat(jobs, ","),
                         "--format=JobID,State" })
  if not out then return nil, f end
  local by = table_of(out)
  -- a state such as "CANCELLED by 0" keeps its first word only (table_of stops at blanks)
  return by
end

function M.cancel(job)
  local out, f = M.run({ "scancel", job })
  if not out then return nil, f end
  return true
end

return M
