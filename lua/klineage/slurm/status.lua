-- Each unit's state, from the run folder first and Slurm second:
--   finished  the unit's own result is there (eval: result.json; walk:
--             walk_end and its repository)
--   running   squeue lists its array task as RUNNING or COMPLETING
--   pending   squeue lists it as PENDING (or CONFIGURING, REQUEUED, ...)
--   failed    neither, and it started: its log or its folder is there
--             (killed, cancelled while running, out of time, crashed)
--   missing   neither, and it never started (cancelled while pending, never
--             submitted, or lost with its node before it wrote anything)
-- The job a unit belongs to is the last array job whose indices hold it.
-- sacct is asked when accounting answers (a cluster without slurmdbd has
-- none): its state is kept as the unit's detail, and one it ended in
-- (FAILED, CANCELLED, TIMEOUT, ...) makes a unit that left nothing
-- "failed". Without it, status works from squeue and the folder alone.
--
--   status.units(splan) -> rows, info | nil, failure (squeue's, as it printed it)
--     rows = { { index, name, state, job, detail }... } in index order
--     info = { accounting = true | "why not" }
--   status.kind(splan) -> the kind's module (eval_units or walk_units)
local folder = require "klineage.slurm.folder"
local scheduler = require "klineage.slurm.scheduler"

local M = {}

local QUEUED = { RUNNING = "running", COMPLETING = "running", PENDING = "pending", CONFIGURING = "pending",
                 REQUEUED = "pending", REQUEUE_HOLD = "pending", RESIZING = "pending", SUSPENDED = "pending" }

function M.kind(splan)
  if splan.kind == "walk" then return require "klineage.slurm.walk_units" end
  return require "klineage.slurm.eval_units"
end

local function exists(path)
  return require("kl.fs").stat(path) ~= nil -- never opened: an open blocks on a FIFO
end

-- The unit's log from its job (sbatch --output=.../unit-%a-%A.out).
local function log_of(splan, index, job)
  return string.format("%s/slurm/logs/unit-%d-%s.out", splan.run, index, job)
end

-- What squeue says of one index of a job, with the pending array's ranges ("[2-5%2]") expanded.
local function queued_state(by_index, index)
  if not by_index then return nil end
  if by_index[string.format("%d", index)] then return by_index[string.format("%d", index)] end
  for spec, state in pairs(by_index) do
    local inner = spec:match("^%[(.-)%]$")
    if inner then
      inner = inner:gsub("%%%d+$", "")
      for part in inner:gmatch("[^,]+") do
        local lo, hi = part:match("^(%d+)%-(%d+)$")
        lo, hi = tonumber(lo or part), tonumber(hi or part)
        if lo and index >= lo and index <= hi then return state end
      end
    end
  end
end

function M.units(splan)
  local kind = M.kind(splan)
  local job_of = {}
  for _, r in ipairs(folder.jobs(splan.run)) do
    if r.kind == "array" then
      for _, i in ipairs(r.indices or {}) do job_of[math.tointeger(i)] = tostring(r.job) end
    end
  end
  local queue, qf = scheduler.queue()
  if not queue then return nil, qf end
  local jobs, seen = {}, {}
  for _, j in pairs(job_of) do if not seen[j] then seen[j] = true jobs[#jobs + 1] = j end end
  table.sort(jobs)
  local acct, af = scheduler.accounting(jobs)
  local info = { accounting = acct and true or (af and af.message or "no answer") }
  local rows = {}
  for _, u in ipairs(splan.units) do
    local job = job_of[u.index]
    local row = { index = u.index, name = u.name, job = job }
    local ended = acct and job and queued_state(acct[job], u.index)
    if kind.finished(splan, u) then
      row.state = "finished"
    else
      local q = job and queued_state(queue[job], u.index)
      if q then
        row.state = QUEUED[q] or "running"
        row.detail = q
      elseif exists(splan.run .. "/" .. u.name) or (job and exists(log_of(splan, u.index, job))) then
        row.state = "failed"
      elseif ended and ended ~= "PENDING" and ended ~= "COMPLETED" then
        row.state = "failed"
      else
        row.state = "missing"
      end
    end
    if ended then row.detail = row.detail or ("sacct: " .. ended) end
    if job and row.state == "failed" and exists(log_of(splan, u.index, job)) then
      row.log = log_of(splan, u.index, job)
    end
    rows[#rows + 1] = row
  end
  return rows, info
end

return M
