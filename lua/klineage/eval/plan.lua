-- The eval a command line describes: its suite, its policies, the options
-- every unit runs with and the units themselves, in the order the eval
-- runs them (task, then policy, then seed). `klineage eval` runs the plan
-- here; `klineage slurm unit` rebuilds it from the saved command line and
-- runs one unit of it, so a unit on a cluster runs with exactly what the
-- same unit would run with locally.
--
--   plan.FLAGS: the eval command's flags (klineage.base.args spec)
--   plan.from_args(a [, given]) -> { suite, policies, opts, units = { { task, policy, seed, name }... } }
--     a = args.parse(argv, { flags = plan.FLAGS }); bad input raises a
--     usage error (klineage.base.args), as a command does: this is the command
--     line's meaning, not a library call. given.observations: what
--     --learn-from's folders give, extracted already (a Slurm unit reads
--     them from its run folder instead of extracting them again).
local args = require "klineage.base.args"
local eval = require "klineage.eval"
local llm_mod = require "klineage.llm"

local M = {}

M.FLAGS = llm_mod.add_flags({ budget = "number", policies = "string", leave_one_out = "boolean", seeds = "number",
                              backend = "string", journal = "string", run = "string", skills = "string",
                              learn_from = "list", tasks = "string", seconds = "number", json = "boolean", quiet = "boolean" })

local function only_tasks(suite, list)
  local want, kept = {}, {}
  for t in list:gmatch("[^,]+") do want[t] = true end
  for _, t in ipairs(suite.tasks) do if want[t.name] then kept[#kept + 1] = t want[t.name] = nil end end
  local missing = next(want)
  if missing then args.usage_error("--tasks: %s has no task '%s'", suite.name, missing) end
  suite.tasks = kept
end

local function skills_of(a, suite, opts, given)
  local files = require "klineage.base.files"
  if a.learn_from and given and given.observations then
    opts.observations = given.observations
    return
  end
  if a.learn_from then
    for _, d in ipairs(a.learn_from) do
      if not files.read_text(d .. "/journal.jsonl") then args.usage_error("--learn-from %s is not a run folder (no journal.jsonl)", d) end
    end
    opts.observations = require("klineage.skills.extract").folders(a.learn_from)
    return
  end
  if suite.name == "lineages" and not a.skills then
    args.usage_error("the lineages suite learns its skills leave-one-out: give the walk and probe run folders with --learn-from")
  end
  -- Without --skills each unit's run context reads skills/<its arch>.
  if not a.skills then return end
  local records, problems = require("klineage.skills.store").load(a.skills)
  if not records then args.usage_error("%s", problems.message) end
  if #problems > 0 then args.usage_error("%s: %s", files.display(problems[1].path), problems[1].message) end
  opts.skills, opts.skills_dir = records, a.skills
end

function M.from_args(a, given)
  local budget = a.budget or 30
  local bok, bf = require("klineage.device.context").check_budget(budget, 1)
  if not bok then args.usage_error("--budget: %s", bf.message) end
  local nseeds = a.seeds or 3
  if math.type(nseeds) ~= "integer" or nseeds < 1 then args.usage_error("--seeds needs a whole number >= 1") end
  if a.run and not (a.run:match("^[%w_.%-]+$") and require("klineage.store.runs").check_name(a.run)) then
    args.usage_error("--run takes a plain name ([A-Za-z0-9_.-], not . or ..)")
  end
  if a.backend then
    -- the eval's and its units' folders are named after it: checked before any is made
    local ok, bf = require("klineage.device.backends").check(a.backend)
    if not ok then args.usage_error("%s", bf.message) end
  end
  local suite, sf = eval.suite(a.positional[1])
  if not suite then args.usage_error("%s", sf.message) end
  if a.tasks then only_tasks(suite, a.tasks) end
  local search = require "klineage.search"
  local policies, seeded = {}, {}
  for p in (a.policies or "klineage"):gmatch("[^,]+") do
    local ok, pf = search.load_policy(p, "forward")
    if not ok then args.usage_error("--policies: %s", pf.message) end
    policies[#policies + 1], seeded[p] = p, ok.seeded
  end
  local opts = { budget = budget, backend = a.backend, leave_one_out = a.leave_one_out or suite.name == "lineages",
                 suite = suite.name }
  skills_of(a, suite, opts, given)
  local llm_client, lf = llm_mod.client_from_args(a)
  if a.llm and not llm_client then args.usage_error("--llm: %s", lf.message) end
  opts.llm = llm_client and llm_mod.seam(llm_client)
  opts.llm_client = llm_client
  local root, rf = require("klineage.store.runs").root(a.journal)
  if not root then args.usage_error("%s", rf.message) end
  opts.eval = a.run or string.format("eval-%s-%s", suite.name, a.backend or "default")
  opts.runs = root .. "/" .. opts.eval
  local units = {}
  for _, t in ipairs(suite.tasks) do
    for _, p in ipairs(policies) do
      local seeds = seeded[p] and nseeds or 0
      if seeds == 0 then
        units[#units + 1] = { task = t, policy = p, name = eval.unit_name(opts, t, p) }
      end
      for s = 1, seeds do units[#units + 1] = { task = t, policy = p, seed = s, name = eval.unit_name(opts, t, p, s) } end
    end
  end
  return { suite = suite, policies = policies, opts = opts, units = units }
end

return M
