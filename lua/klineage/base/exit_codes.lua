-- The exit code of every klineage command, from one rule: who is to blame
-- (the verdict registry, klineage.base.verdicts) says what the caller must do
-- next, so the code says who is to blame.
--
--   exit_codes.of(outcome [, where]) -> integer
--     outcome: a failure or a record ({ verdict = id, ... }), a verdict
--     id, or one of the outcome names in M.OUTCOMES (things no verdict
--     names: a usage error, match's "nothing matched"). Anything else is
--     misuse and raises.
--     where: the place the failure happened, when M.WHERE holds an
--     exception for it ("open_run").
--
-- Commands return exit_codes.of(...); none maps a verdict to a code itself.
local verdicts = require "klineage.base.verdicts"

local M = {}

-- The rule, by blame. A script that calls klineage branches on three
-- answers: 0 go on; 1 the work ran and said no (look at the kernel, the
-- baseline, the machine, the provider: the command line was fine); 2 fix
-- the command line or a file it names.
M.BY_BLAME = {
  none = 0,      -- nothing is wrong
  -- The budget is the user's own stopping point, like --max-steps: a run
  -- that spends it ended normally (optimize, walk, eval, bench), its
  -- journal holds every judgement, and a resume with more goes on.
  budget = 0,
  candidate = 1, -- the kernel under judgement was refused by the gate
  baseline = 1,  -- the reference failed, so the candidate was not judged
  transform = 1, -- a transform's static check refused the site
  backend = 1,   -- the backend cannot run what the kernel uses
  engine = 1,    -- klineage or the machine under it failed
  llm = 1,       -- the LLM provider or its answer failed
  input = 2,     -- what the user gave is malformed or does not fit
}

-- Outcomes that no verdict names, each with the command that documents it.
-- Their names are never verdict ids (exit_codes_spec checks it).
M.OUTCOMES = {
  usage = 2,            -- args.usage_error: an option, an argument (the README's "bad input")
  failed = 1,           -- the work ran and what it checks failed, with no verdict to name it:
                        -- a spec (test), a hard requirement (doctor), a script that raised (run)
  nothing_matched = 1,  -- match: nothing matched, as grep's 1
  trouble = 2,          -- match: a pattern, template or file it could not use, read or write,
                        -- as grep's 2 (a failed write included: a script reads 2 as "see stderr")
  incomplete = 3,       -- a cap cut the work short, run again or raise it (match: the step cap;
                        -- skills probe: --seconds or --budget before every probe ran)
  inputs_skipped = 4,   -- match: an input was skipped unread (too big, not a regular file)
  stopped_after_fault = 3, -- worker: it ended after a sticky device fault, on purpose (its pool
                        -- restarts it; 3 tells that from a crash, which exits 1)
}

-- Exceptions by where a failure happened, written once. Opening a run:
-- the runs folder is the user's (--journal, KLINEAGE_RUNS, HOME), so one
-- that cannot be made or written is bad input, as the README says of "a
-- runs folder that cannot be made" (exit 2). A worker that does not start
-- (engine) stays 1.
M.WHERE = {
  open_run = { io_error = 2 },
}

function M.of(outcome, where)
  local id = outcome
  if type(outcome) == "table" then id = outcome.verdict end
  if type(id) ~= "string" then error("exit_codes.of: not an outcome: " .. tostring(outcome), 2) end
  if where ~= nil and not M.WHERE[where] then error("exit_codes.of: no place '" .. tostring(where) .. "'", 2) end
  local v = verdicts.get(id)
  if v then
    local special = where and M.WHERE[where][id]
    if special then return special end
    local code = M.BY_BLAME[v.blame]
    if not code then error("exit_codes.of: the blame '" .. tostring(v.blame) .. "' of '" .. id .. "' has no code", 2) end
    return code
  end
  local code = M.OUTCOMES[id]
  if not code then error("exit_codes.of: '" .. id .. "' is neither a verdict nor an outcome", 2) end
  return code
end

return M
