-- One backward walk as a library call, from the walk's parsed flags: what
-- `klineage walk WORKLOAD` does between reading its command line and
-- printing, so that the command and a Slurm unit (klineage.slurm.walk_units)
-- walk the same way and neither calls the other.
--
--   walk.flags() -> a fresh args.parse spec of the walk's own flags (the
--       LLM's included); a caller may add its own to it
--   walk.check(a) -> a: the flags' values checked; bad input raises a
--       usage error (klineage.base.args.usage_error)
--   walk.run(w, a, argv [, hooks]) -> summary | nil, failure, run_dir
--       w: the loaded workload (it has a lineage); a: checked flags; argv:
--       the walk's command line for the journal; hooks.opened(ctx, policy)
--       -> a progress function (search.run's opts.progress) | nil, called
--       once the run context is open. The run context is closed on return.
--       summary.run is the run folder. A run context that cannot open is
--       a failure before any hook, run_dir nil.
local args = require "klineage.base.args"
local llm_mod = require "klineage.llm"
local runs = require "klineage.store.runs"
local verdicts = require "klineage.base.verdicts"

local M = {}

function M.flags()
  return llm_mod.add_flags({ policy = "string", budget = "number", backend = "string", max_steps = "number",
    resume = "string", run = "string", journal = "string", json = "boolean", quiet = "boolean" })
end

function M.check(a)
  if a.budget then
    local ok, bf = require("klineage.device.context").check_budget(a.budget)
    if not ok then args.usage_error("--budget: %s", bf.message) end
  end
  local max_steps = a.max_steps
  if max_steps and (math.type(max_steps) ~= "integer" or max_steps < 1) then args.usage_error("--max-steps needs a whole number >= 1") end
  if a.run and a.resume then args.usage_error("give --run or --resume, not both") end
  if a.run and not (a.run:match("^[%w_.%-]+$") and runs.check_name(a.run)) then
    args.usage_error("--run takes a plain name ([A-Za-z0-9_.-], not . or ..)")
  end
  return a
end

function M.run(w, a, argv, hooks)
  local search = require "klineage.search"
  local llm_client, lf = llm_mod.client_from_args(a)
  if a.llm and not llm_client then args.usage_error("--llm: %s", lf.message) end
  local policy, pf = search.load_policy(a.policy or "greedy", "backward")
  if not policy then args.usage_error("%s", pf.message) end
  local resume, create_id = a.resume, nil
  if a.run then
    if runs.find(a.run, a.journal) then resume = a.run else create_id = a.run end
  end
  local ctx, f = require("klineage.device.context").new({ backend = a.backend, journal = a.journal, resume = resume,
    run_id = create_id, budget = a.budget, command = { "klineage", "walk", table.unpack(argv) }, workloads = { w } })
  if not ctx then return nil, f end
  local progress = hooks and hooks.opened and hooks.opened(ctx, policy) or nil
  local summary, sf = verdicts.catch(search.run, ctx, w, { policy = policy, direction = "backward", max_steps = a.max_steps,
    llm = llm_client and llm_mod.simplifier(llm_client), progress = progress })
  local run_dir = ctx.run and ctx.run.dir
  ctx:close()
  if not summary then return nil, sf, run_dir end
  summary.run = run_dir
  return summary
end

return M
