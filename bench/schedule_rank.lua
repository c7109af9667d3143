-- How well the static schedule model (lua/klineage/search/schedule_rank.lua)
-- orders what the GPU measured: read from a bench/schedules.lua run folder
-- (its journal's comparisons: each schedule's speedup over the naive
-- kernel), no GPU needed. Per task, the model's order of the task's legal
-- schedules (those the bench judged), and the position in it of the first
-- schedule within 90 % of the best measured one: the cycles a search that
-- judges in the model's order spends to get there.
--
--   klineage run bench/schedule_rank.lua RUN_FOLDER [--suite DIR] [--depth 1|2] [--skills DIR] [--verbose]
--
-- --skills: rank with the schedule skills' priors of that repository (the
-- rows' prior x predicted speedup, as the search does); without it, the
-- model alone.
--
-- Headline figures (tasks where some schedule is 5 % or more faster):
--   rank-first-or-second: N/M tasks   the 90 %-best is the model's first or second
--   rank-mean-position: P             mean position of the 90 %-best
local journal = require "klineage.store.journal"
local kir = require "klineage.kir"
local workload = require "klineage.workload"
local schedules = require "klineage.search.schedules"
local host = require "kl.host"

local USAGE = "usage: klineage run bench/schedule_rank.lua RUN_FOLDER [--suite DIR] [--depth 1|2] [--skills DIR] [--verbose]\n"
local run_dir, opts, i = nil, { suite = (host.home or ".") .. "/examples/suites/held-out", depth = "1" }, 1
while arg[i] do
  local k = arg[i]:match("^%-%-([%w_]+)$")
  if k == "verbose" then
    opts.verbose, i = true, i + 1
  elseif k and (k == "suite" or k == "depth" or k == "skills") and arg[i + 1] then
    opts[k], i = arg[i + 1], i + 2
  elseif not k and not run_dir then
    run_dir, i = arg[i], i + 1
  else
    io.stderr:write(USAGE) os.exit(2)
  end
end
if not run_dir then io.stderr:write(USAGE) os.exit(2) end
local records, f = journal.read(run_dir .. "/journal.jsonl")
if not records then io.stderr:write("bench/schedule_rank.lua: " .. tostring(f and f.message or f) .. "\n") os.exit(2) end

local skills
if opts.skills then
  local sf
  skills, sf = require("klineage.skills.store").load(opts.skills)
  if not skills then io.stderr:write("bench/schedule_rank.lua: " .. tostring(sf and sf.message or sf) .. "\n") os.exit(2) end
end

-- task -> schedule text -> measured speedup over the naive kernel
local measured, tasks = {}, {}
for _, r in ipairs(records) do
  if r.kind == "comparison" and r.result and r.result.speedup and r.workload and r.b then
    local text = tostring(r.b.label):match("^schedule (.*)$")
    if text then
      local t = r.workload.name
      if not measured[t] then measured[t], tasks[#tasks + 1] = {}, t end
      measured[t][text] = r.result.speedup
    end
  end
end
table.sort(tasks)
if #tasks == 0 then io.stderr:write("bench/schedule_rank.lua: no schedule comparisons in " .. run_dir .. "\n") os.exit(2) end

print("| task | best measured | speedup | model's first | its speedup | position of 90 %-best |")
print("|---|---|---|---|---|---|")
local counted, top2, positions = 0, 0, 0
for _, name in ipairs(tasks) do
  local w = assert(workload.load(opts.suite .. "/" .. name .. "/workload.lua"))
  local src = assert(io.open(w.dir .. "/kernel.cu")):read("a")
  local state = { workload = w, tried = {}, timed = false, decide = function() end }
  if skills then
    state.skill_records = function() return skills end
    state.facts = function(_, node)
      local f = require("klineage.facts").of(node.source, w.kernel, { workload = w, arch = "sm_90" })
      return f and f.values or {}
    end
  end
  local rows = schedules.rows(state, { source = src, sha256 = name }, { depth = tonumber(opts.depth), limit = 1000 })
  local ranked = {}
  for _, row in ipairs(rows) do
    if measured[name][row.schedule] then ranked[#ranked + 1] = row end
  end
  local best, best_text = 0, "-"
  for text, s in pairs(measured[name]) do
    if s > best or (s == best and text < best_text) then best, best_text = s, text end
  end
  local pos
  for p, row in ipairs(ranked) do
    if measured[name][row.schedule] >= 0.9 * best then pos = p break end
  end
  if best >= 1.05 and pos then
    counted, positions = counted + 1, positions + pos
    if pos <= 2 then top2 = top2 + 1 end
  end
  local first = ranked[1]
  print(string.format("| %s | %s | %.2fx | %s | %s | %s |", name, best_text, best, first and first.schedule or "-",
    first and string.format("%.2fx", measured[name][first.schedule]) or "-",
    best >= 1.05 and (pos and string.format("%d of %d", pos, #ranked) or "-") or "(no gain)"))
  if opts.verbose then
    for _, row in ipairs(ranked) do
      print(string.format("|   | %s | %.2fx | predicted %.2fx | %s | |", row.schedule, measured[name][row.schedule],
        row.predicted.speedup, row.predicted.why))
    end
  end
end
print()
print(string.format("tasks: %d measured, %d where a schedule gains 5 %% or more", #tasks, counted))
print(string.format("rank-first-or-second: %d/%d tasks", top2, counted))
print(string.format("rank-mean-position: %.2f", counted > 0 and positions / counted or 0))
