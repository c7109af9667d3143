-- The units of an eval on Slurm: unit INDEX is the eval's INDEX-th unit
-- (klineage.eval.plan's order), rebuilt from the eval's saved command line
-- (and, with --learn-from, the observations extracted once at submission:
-- RUN/slurm/observations.lua) and run by eval.unit, so it writes the folder and result.json the same
-- unit writes locally, and resumes from its journals when run again.
--
--   eval_units.run(splan, index) -> exit code (0: finished; 1: not run)
--   eval_units.finished(splan, unit) -> true when RUN/<unit>/result.json is there
--   eval_units.merge(splan) -> { finished, of, files = { paths } } | nil, failure
--
-- The merge writes, from the units' result.json files alone:
--   RUN/journal.jsonl  the eval's journal: its run record, then one eval_unit
--                      record per finished unit, in the eval's unit order
--   RUN/table.txt      the table `klineage eval` prints (klineage.eval.table)
--   RUN/report.md, RUN/report.html   the eval report, from that journal
-- It is deterministic: the journal is written whole, in canonical JSON
-- (sorted keys), with no clock of its own; the only times in it are the
-- units' start times (each record's time is its unit's, the run record's
-- the earliest), so the same results, finished in any order, give the
-- same bytes. A merge run again replaces these files: they are derived
-- from the units, whose own journals are the append-only record.
local args = require "klineage.base.args"
local eval = require "klineage.eval"
local files = require "klineage.base.files"
local runs = require "klineage.store.runs"
local verdicts = require "klineage.base.verdicts"

local M = {}

local function rebuild(splan)
  local plan_mod = require "klineage.eval.plan"
  local ok, a = pcall(args.parse, splan.argv, { flags = plan_mod.FLAGS, min = 1, max = 1 })
  if not ok then error(a, 0) end
  local given
  if splan.observations then
    local list, f = require("klineage.slurm.observations").read(splan.run .. "/" .. splan.observations)
    if not list then args.usage_error("%s", f.message) end
    given = { observations = list }
  end
  return plan_mod.from_args(a, given)
end

function M.run(splan, index)
  local u = splan.units[index + 1]
  local plan = rebuild(splan)
  local mine = plan.units[index + 1]
  if not mine or mine.name ~= u.name then
    args.usage_error("unit %d of the plan is %s, but the eval's command line now gives %s: the suite changed since it was submitted",
      index, u.name, mine and mine.name or "no unit")
  end
  assert(require("kl.proc").mkdir_p(plan.opts.runs))
  local r = eval.unit(plan.opts, mine.task, mine.policy, mine.seed)
  io.stdout:write(require("klineage.eval.table").unit_line(r), "\n")
  if r.not_run then return 1 end
  return 0
end

function M.finished(splan, unit)
  return (require("klineage.base.files").regular(splan.run .. "/" .. unit.name .. "/result.json"))
end

local function earliest(results)
  local t
  for _, r in ipairs(results) do
    local rt = type(r.ran_on) == "table" and tonumber(r.ran_on.time)
    if rt and (not t or rt < t) then t = rt end
  end
  return t
end

function M.merge(splan)
  local results = {}
  for _, u in ipairs(splan.units) do
    local r = eval.read_result(splan.run, u.name)
    if r then results[#results + 1] = r end
  end
  local a = splan.argv
  local opts = { eval = splan.run:match("([^/]+)$"), backend = splan.backend, budget = splan.budget, suite = splan.suite }
  local lines = {}
  local run = eval.run_record(opts, { "klineage", "eval", table.unpack(a) })
  run.seq, run.time = 1, earliest(results) or 0
  lines[1] = runs.canonical_json(run)
  for _, r in ipairs(results) do
    local rec = eval.unit_record(r)
    rec.seq, rec.time = #lines + 1, type(r.ran_on) == "table" and r.ran_on.time or run.time
    lines[#lines + 1] = runs.canonical_json(rec)
  end
  local jok, jf = files.write_atomic(splan.run .. "/journal.jsonl", table.concat(lines, "\n") .. "\n")
  if not jok then return nil, jf end
  local rows = eval.aggregate(results)
  local unfinished = #results < #splan.units
    and { finished = #results, of = #splan.units, hint = "klineage slurm resubmit sends the rest again" } or nil
  local text = require("klineage.eval.table").text(results, rows, unfinished)
  local tok, tf = files.write_atomic(splan.run .. "/table.txt", text)
  if not tok then return nil, tf end
  local written = { splan.run .. "/journal.jsonl", splan.run .. "/table.txt" }
  local rok, report, rf = pcall(require("klineage.report").write, splan.run)
  if not rok or not report then
    return nil, verdicts.failure("io_error", "the eval's report could not be rendered: "
      .. tostring(rok and (rf and rf.message or rf) or report):gsub("\n.*", ""))
  end
  written[#written + 1] = report.md
  written[#written + 1] = report.html
  return { finished = #results, of = #splan.units, files = written, text = text }
end

return M
