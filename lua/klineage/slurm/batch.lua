-- The batch scripts sbatch runs: one array job whose task INDEX runs unit
-- INDEX of the run's plan, and one merge job after it. Text only; nothing
-- here touches Slurm.
--
--   batch.array_spec(indices [, limit]) -> "0-5%2", "1,3-4": sbatch --array's value
--   batch.array_script(plan, indices, exe) -> text
--   batch.merge_script(plan, after, exe) -> text   (after: the array's job id)
--     plan: klineage.slurm.folder's; exe: the klineage binary, as the
--     nodes see it (the runs folder and the binary must be shared)
local M = {}

-- Single quotes for sh: every byte literal.
local function q(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end
M.quote = q

function M.array_spec(indices, limit)
  local sorted = table.move(indices, 1, #indices, 1, {})
  table.sort(sorted)
  local parts, i = {}, 1
  while i <= #sorted do
    local j = i
    while j < #sorted and sorted[j + 1] == sorted[j] + 1 do j = j + 1 end
    parts[#parts + 1] = j > i and string.format("%d-%d", sorted[i], sorted[j]) or string.format("%d", sorted[i])
    i = j + 1
  end
  local spec = table.concat(parts, ",")
  if limit then spec = spec .. "%" .. limit end
  return spec
end

-- The #SBATCH lines every job of the run shares (the merge asks no GPU).
local function common(plan, lines, gpus)
  local o = plan.options or {}
  lines[#lines + 1] = "#SBATCH --chdir=" .. plan.cwd
  lines[#lines + 1] = "#SBATCH --ntasks=1"
  if o.partition then lines[#lines + 1] = "#SBATCH --partition=" .. o.partition end
  if o.account then lines[#lines + 1] = "#SBATCH --account=" .. o.account end
  if o.time then lines[#lines + 1] = "#SBATCH --time=" .. o.time end
  if gpus and (o.gpus_per_task or 0) > 0 then lines[#lines + 1] = "#SBATCH --gpus-per-task=" .. o.gpus_per_task end
end

local function name_of(plan) return plan.run:match("([^/]+)$") end

function M.array_script(plan, indices, exe)
  local lines = { "#!/bin/sh",
    "#SBATCH --job-name=klineage-" .. name_of(plan),
    "#SBATCH --array=" .. M.array_spec(indices, plan.options and plan.options.array_limit),
    "#SBATCH --output=" .. plan.run .. "/slurm/logs/unit-%a-%A.out" }
  common(plan, lines, true)
  lines[#lines + 1] = string.format("# One unit of this %s per array task: unit $SLURM_ARRAY_TASK_ID of %s/slurm/units.json.", plan.kind, plan.run)
  lines[#lines + 1] = "# It journals under the run folder, and resumes from its journal when run again."
  lines[#lines + 1] = string.format("exec %s slurm unit %s \"$SLURM_ARRAY_TASK_ID\"", q(exe), q(plan.run))
  return table.concat(lines, "\n") .. "\n"
end

function M.merge_script(plan, after, exe)
  local lines = { "#!/bin/sh",
    "#SBATCH --job-name=klineage-merge-" .. name_of(plan),
    "#SBATCH --dependency=afterany:" .. after,
    "#SBATCH --output=" .. plan.run .. "/slurm/logs/merge-%j.out" }
  common(plan, lines, false)
  lines[#lines + 1] = "# After every array task ended, however it ended: the merge says which units are missing."
  lines[#lines + 1] = string.format("exec %s slurm merge %s", q(exe), q(plan.run))
  return table.concat(lines, "\n") .. "\n"
end

return M
