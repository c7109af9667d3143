-- The options that send `klineage eval` and `klineage walk` to Slurm,
-- shared by both commands: their flags, their help, their checks, and the
-- command line a unit runs with (the same one, less these options).
--
--   options.FLAGS              the flags (klineage.base.args spec), to add to a command's
--   options.USAGE, options.HELP
--   options.add_flags(flags) -> flags with options.FLAGS added
--   options.from_args(a, backend) -> { partition, account, time, gpus_per_task,
--       array_limit, dry_run } (a usage error for bad values)
--       gpus_per_task defaults to 1, and to 0 (none asked) on the emu backend
--   options.unit_argv(argv) -> argv without the Slurm options, --journal and --run
local args = require "klineage.base.args"

local M = {}

M.FLAGS = { slurm = "boolean", partition = "string", gpus_per_task = "number", array_limit = "number",
            account = "string", time = "string", dry_run = "boolean" }

M.USAGE = "[--slurm [--partition P] [--gpus-per-task 1] [--array-limit N] [--account A] [--time T] [--dry-run]]"

M.HELP = [[
on a Slurm cluster (see klineage slurm; the runs folder must be shared):
  --slurm            split the work into units and submit them as one job
                     array (sbatch), one unit per array task, then a merge
                     job that runs after it (--dependency=afterany)
  --partition P      sbatch --partition
  --gpus-per-task N  GPUs of each array task (default 1; 0, the default on
                     emu, asks for none); the worker pool uses what Slurm
                     gives through CUDA_VISIBLE_DEVICES
  --array-limit N    at most N array tasks at once (--array=0-M%N)
  --account A        sbatch --account
  --time T           sbatch --time, per array task (e.g. 2:00:00)
  --dry-run          print the batch script and the unit list; submit nothing]]

function M.add_flags(flags)
  for k, v in pairs(M.FLAGS) do flags[k] = v end
  return flags
end

-- What goes on an #SBATCH line untouched: no blanks, quotes or shell specials.
local function plain(name, v)
  if v and not v:match("^[%w_.:,%-/+=@]+$") then args.usage_error("--%s takes a plain value ([A-Za-z0-9_.:,/+=@-]), got '%s'", name, v) end
  return v
end

function M.from_args(a, backend)
  for _, k in ipairs({ "partition", "gpus_per_task", "array_limit", "account", "time", "dry_run" }) do
    if a[k] ~= nil and not a.slurm then args.usage_error("--%s goes with --slurm", (k:gsub("_", "-"))) end
  end
  local gpus = a.gpus_per_task or ((require("klineage.device.backends").traits(backend) or {}).gpus or 1)
  if math.type(gpus) ~= "integer" or gpus < 0 then args.usage_error("--gpus-per-task needs a whole number >= 0") end
  local limit = a.array_limit
  if limit and (math.type(limit) ~= "integer" or limit < 1) then args.usage_error("--array-limit needs a whole number >= 1") end
  if a.time and not a.time:match("^[%d:%-]+$") then
    args.usage_error("--time takes a Slurm time (MM, HH:MM:SS or D-HH), got '%s'", a.time)
  end
  return { partition = plain("partition", a.partition), account = plain("account", a.account), time = a.time,
           gpus_per_task = gpus, array_limit = limit, dry_run = a.dry_run or false }
end

local VALUED = { ["--partition"] = true, ["--gpus-per-task"] = true, ["--array-limit"] = true, ["--account"] = true,
                 ["--time"] = true, ["--journal"] = true, ["--run"] = true }
local ALONE = { ["--slurm"] = true, ["--dry-run"] = true }

function M.unit_argv(argv)
  local out, i = {}, 1
  while i <= #argv do
    local w = argv[i]
    local name = w:match("^(%-%-[%w%-_]+)=") or w
    name = name:gsub("_", "-")
    if w == "--" then
      table.move(argv, i, #argv, #out + 1, out)
      break
    elseif ALONE[name] then
      i = i + 1
    elseif VALUED[name] then
      i = i + (w:find("=", 1, true) and 1 or 2)
    else
      out[#out + 1] = w
      i = i + 1
    end
  end
  return out
end

return M
