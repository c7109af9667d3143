-- The units of walks on Slurm: one per (lineage, policy), each a
-- `klineage walk` of its own run folder RUN/<unit> (resumed from its
-- journal when run again), then the skill repository learned from that
-- walk alone, RUN/<unit>/skills. The merge pools the units' repositories
-- with the skills merge (klineage.skills.merge) into RUN/skills, and
-- writes RUN/walks.txt, one line per unit.
--
--   walk_units.units(workloads, policies, a, flags, run) -> { { index, name, argv }... }
--       a: the walk command's parsed flags (flags: its spec), run: the run
--       folder; each unit's argv is its own walk's, with the flags that
--       change a walk (budget, backend, max steps, the LLM's) passed on
--   walk_units.run(splan, index) -> exit code (the walk's): the walk is
--       klineage.search.walk, as `klineage walk` makes it, never the command
--   walk_units.finished(splan, unit) -> true when its journal has walk_end
--       and its repository was written
--   walk_units.merge(splan) -> { finished, of, files, text } | nil, failure
--       deterministic: units in name order, records by id (skills merge),
--       no time in walks.txt
local files = require "klineage.base.files"
local journal = require "klineage.store.journal"
local verdicts = require "klineage.base.verdicts"

local M = {}

-- The walk flags a unit passes on; the run folder, output and Slurm's are its own.
local OWN = { policy = true, run = true, resume = true, journal = true, json = true, quiet = true }

local function passed_on(a, flags)
  local names = {}
  for k in pairs(flags) do
    if not OWN[k] and a[k] ~= nil and not require("klineage.slurm.options").FLAGS[k] then names[#names + 1] = k end
  end
  table.sort(names)
  local out = {}
  for _, k in ipairs(names) do
    local opt = "--" .. k:gsub("_", "-")
    local v = a[k]
    if v == true then
      out[#out + 1] = opt
    elseif type(v) == "table" then
      for _, x in ipairs(v) do out[#out + 1] = opt .. "=" .. x end
    else
      out[#out + 1] = opt .. "=" .. tostring(math.tointeger(v) or v)
    end
  end
  return out
end

function M.name(workload, policy, backend)
  return table.concat({ workload, (policy:gsub("[^%w]", "_")), backend or "default" }, "-")
end

function M.units(workloads, policies, a, flags, run)
  local rest = passed_on(a, flags)
  local units = {}
  for _, w in ipairs(workloads) do
    for _, p in ipairs(policies) do
      local name = M.name(w, p, a.backend)
      local argv = { w, "--policy", p, "--run", name, "--journal", run, "--quiet" }
      table.move(rest, 1, #rest, #argv + 1, argv)
      units[#units + 1] = { index = #units, name = name, argv = argv }
    end
  end
  return units
end

local function walk_end(dir)
  local last
  for _, r in ipairs(journal.read(dir .. "/journal.jsonl") or {}) do
    if r.kind == "walk_end" then last = r end
  end
  return last
end

local function repository_written(dir)
  return (require("klineage.base.files").regular(dir .. "/skills/.learned"))
end

-- The unit's own repository, learned from its walk alone; the marker is
-- written last, so a unit killed while writing it learns it again.
local function learn(dir)
  local observations = require("klineage.skills.extract").folders({ dir })
  local records = require("klineage.skills.learn").repository(observations)
  local done, f = require("klineage.skills.store").write_all(dir .. "/skills", records)
  if not done then return nil, f end
  return files.write_atomic(dir .. "/skills/.learned", string.format("%d skills from %d observations\n", #records, #observations))
end

-- The unit's walk, from its own argv (the walk's flags): the library walk
-- (klineage.search.walk) that `klineage walk` makes too, then its report.
local function walk(argv)
  local args = require "klineage.base.args"
  local lib = require "klineage.search.walk"
  local a = lib.check(args.parse(argv, { flags = lib.flags(), min = 1, max = 1 }))
  local ok, w, wf = pcall(require("klineage.workload").load, a.positional[1])
  if not ok or not w then
    local why = ok and wf or w
    args.usage_error("cannot load the workload '%s': %s", files.display(a.positional[1]),
      (tostring(type(why) == "table" and why.message or why):gsub("\n.*", "")))
  end
  local summary, f, run_dir = lib.run(w, a, argv)
  require("klineage.report").after_run("walk", summary and summary.run or run_dir, true)
  if not summary then
    io.stderr:write("klineage slurm unit: the walk: ", require("klineage.base.term").text(f), "\n")
    return require("klineage.base.exit_codes").of(f)
  end
  io.stdout:write(string.format("%s, policy %s, %s backend: %d steps, %d gate cycles, %.1f s; stopped: %s\n",
    require("klineage.base.term").text(w.name), summary.policy, summary.backend, #summary.steps, summary.cycles, summary.seconds,
    require("klineage.base.term").text(summary.stopped)))
  return 0
end

function M.run(splan, index)
  local u = splan.units[index + 1]
  local dir = splan.run .. "/" .. u.name
  if not walk_end(dir) then
    local code = walk(u.argv)
    if code ~= 0 then return code end
  end
  if not walk_end(dir) then
    io.stderr:write("klineage slurm unit: the walk of ", u.name, " ended without its walk_end record\n")
    return 1
  end
  if not repository_written(dir) then
    local ok, f = learn(dir)
    if not ok then
      io.stderr:write("klineage slurm unit: ", tostring(f), "\n")
      return 1
    end
  end
  return 0
end

function M.finished(splan, unit)
  local dir = splan.run .. "/" .. unit.name
  return walk_end(dir) ~= nil and repository_written(dir)
end

local function cycles_of(dir)
  local n = 0
  for _, r in ipairs(journal.read(dir .. "/journal.jsonl") or {}) do if r.charged then n = n + 1 end end
  return n
end

function M.merge(splan)
  local names = {}
  for _, u in ipairs(splan.units) do names[#names + 1] = u.name end
  table.sort(names)
  local dirs, lines, finished = {}, { string.format("%-40s %5s %6s  %s", "unit", "steps", "cycles", "stopped") }, 0
  for _, name in ipairs(names) do
    local dir = splan.run .. "/" .. name
    local e = walk_end(dir)
    if e and repository_written(dir) then
      finished = finished + 1
      dirs[#dirs + 1] = dir .. "/skills"
      lines[#lines + 1] = string.format("%-40s %5d %6d  %s", name, e.steps or 0, cycles_of(dir), tostring(e.stopped))
    else
      lines[#lines + 1] = string.format("%-40s %5s %6s  %s", name, "-", "-", "not finished")
    end
  end
  local records = {}
  if #dirs > 0 then
    local rf
    records, rf = require("klineage.skills.merge").repositories(dirs)
    if not records then return nil, rf end
  end
  local done, wf = require("klineage.skills.store").write_all(splan.run .. "/skills", records)
  if not done then return nil, wf end
  lines[#lines + 1] = string.format("%d of %d walks finished; %d skills merged into skills/", finished, #names, #records)
  local text = table.concat(lines, "\n") .. "\n"
  local ok, f = files.write_atomic(splan.run .. "/walks.txt", text)
  if not ok then return nil, verdicts.failure("io_error", tostring(f.message or f)) end
  return { finished = finished, of = #names, files = { splan.run .. "/walks.txt", splan.run .. "/skills" }, text = text }
end

return M
