-- The eval report: from an eval folder's journal (klineage.eval: one
-- eval_unit record per finished unit), the aggregate table per policy, the
-- convergence curves of every policy on one chart (the geometric mean over
-- the units of the speedup reached by each gate cycle), and one section per
-- task with its units.
--
--   eval.build(run) -> doc, title     (the kind contract: report/init.lua)
--
-- Page structure the browser test relies on: each task is
-- <section class="task" id="task-NAME">.
local common = require "klineage.report.common"
local escape = require "klineage.report.escape"
local evaluation = require "klineage.eval"
local eval_table = require "klineage.eval.table"
local svg = require "klineage.report.svg"

local M = {}

local md = escape.md

local function x(v) return v and string.format("%.2fx", v) or "-" end
local function pct(v) return v and string.format("%.0f %%", 100 * v) or "-" end
local function num(v) return v and string.format("%.1f", v) or "-" end
local function int(v) return v and tostring(math.tointeger(v) or v) or "-" end

-- The last record of each unit (a resumed eval journals a unit once, but be plain about it).
local function units_of(run)
  local by, order = {}, {}
  for _, r in ipairs(run.records) do
    if r.kind == "eval_unit" and type(r.unit) == "string" then
      if not by[r.unit] then order[#order + 1] = r.unit end
      by[r.unit] = r
    end
  end
  local out = {}
  for _, u in ipairs(order) do out[#out + 1] = by[u] end
  table.sort(out, function(a, b)
    if a.task ~= b.task then return a.task < b.task end
    if a.policy ~= b.policy then return a.policy < b.policy end
    return (a.seed or 0) < (b.seed or 0)
  end)
  return out
end

-- Where the units ran (each eval_unit record keeps its run record's
-- device, tools and start), and when the first started: the eval's own
-- journal may be written later (`--seconds 0` reads finished units).
local function with_device(run, units)
  local first = {}
  for k, v in pairs(run.first) do first[k] = v end
  first.time = nil
  for _, u in ipairs(units) do
    local r = type(u.ran_on) == "table" and u.ran_on or {}
    for _, k in ipairs({ "device", "arch", "versions", "backend" }) do first[k] = first[k] or r[k] end
    if tonumber(r.time) and tonumber(r.time) < (tonumber(first.time) or math.huge) then first.time = r.time end
  end
  first.time = first.time or run.first.time
  return { id = run.id, first = first, records = run.records }
end

-- Speedup reached by cycle c, from a unit's curve ({ cycle, speedup } steps).
local function at(curve, c)
  local s = 1
  for _, p in ipairs(curve or {}) do
    if p[1] <= c then s = p[2] end
  end
  return s
end

local function convergence(d, units, budget)
  local by, names = {}, {}
  for _, u in ipairs(units) do
    if u.speedup and u.curve then
      if not by[u.policy] then by[u.policy] = {} names[#names + 1] = u.policy end
      table.insert(by[u.policy], u)
    end
  end
  if #names == 0 then
    d:md("No convergence chart: nothing was timed (the emu backend checks correctness only).")
    return
  end
  table.sort(names)
  local series = {}
  for _, name in ipairs(names) do
    local points = {}
    for c = 0, budget do
      local l = 0
      for _, u in ipairs(by[name]) do l = l + math.log(at(u.curve, c)) end
      points[#points + 1] = { x = c, y = math.exp(l / #by[name]), label = (c % 5 == 0 or c == budget) and tostring(c) or nil }
    end
    series[#series + 1] = { name = name, points = points }
  end
  d:raw(svg.line_chart({ id = "chart-eval-convergence", title = "Geometric-mean speedup over the tasks against gate cycles",
                         unit = "x", x_label = "gate cycles", series = series }))
end

local function task_section(d, name, units)
  local rows = { "| policy | seed | steps | cycles | speedup | interval | to 90 % | to 90 % of best | re-check | stopped |",
                 "|---|---|---|---|---|---|---|---|---|---|" }
  for _, u in ipairs(units) do
    rows[#rows + 1] = string.format("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", md(u.policy), int(u.seed),
      int(u.steps), int(u.cycles), x(u.speedup), u.ci and string.format("\\[%.2f, %.2f\\]", u.ci[1], u.ci[2]) or "-",
      int(u.to90), int(u.to90_best), md(tostring(u.recheck)), md(tostring(u.stopped)))
  end
  d:raw(string.format('<section class="task" id="task-%s">', escape.html(name)))
  d:md("## " .. md(name))
  local at = units[1].timed_at
  if at then d:md(string.format("Timed at %s, not at the workload's params: %s.", md(eval_table.params_text(at.params)), md(at.why))) end
  d:md(table.concat(rows, "\n"))
  d:raw("</section>")
end

function M.build(run)
  local d = require("klineage.report.doc").new()
  local units = units_of(run)
  local first = run.first
  local title = string.format("Eval: %s", tostring(first.suite or run.id))
  d:md("# " .. md(title))
  d:md(common.run_facts(with_device(run, units)))
  local budget = math.tointeger(first.budget) or 30
  d:md(string.format("%d units finished, budget %d gate cycles each. Each unit's final kernel was measured against the "
    .. "task's naive kernel by the interleaved compare in a run of its own, and checked again with fresh seeds.",
    #units, budget))
  local rows = evaluation.aggregate(units)
  local t = { "| policy | units | geometric mean | fast_1 | fast_2 | cycles to 90 % | to 90 % of best | wrong | seconds |",
              "|---|---|---|---|---|---|---|---|---|" }
  for _, r in ipairs(rows) do
    t[#t + 1] = string.format("| %s | %d | %s | %s | %s | %s | %s | %d | %.0f |", md(r.policy), r.units, x(r.geomean),
      pct(r.fast1), pct(r.fast2), num(r.to90), num(r.to90_best), r.wrong, r.seconds)
  end
  d:md(table.concat(t, "\n"))
  local by, names = {}, {}
  for _, u in ipairs(units) do
    if not by[u.task] then by[u.task] = {} names[#names + 1] = u.task end
    table.insert(by[u.task], u)
  end
  -- A partial eval can leave policies with different tasks: then a row is
  -- a mean over its own tasks, and the reader must be told.
  local tasks_of, differ = {}, false
  for _, r in ipairs(rows) do
    local seen, list = {}, {}
    for _, u in ipairs(units) do
      if u.policy == r.policy and not seen[u.task] then seen[u.task] = true list[#list + 1] = u.task end
    end
    table.sort(list)
    tasks_of[#tasks_of + 1] = { policy = r.policy, text = table.concat(list, ", ") }
    if #list ~= #names then differ = true end
  end
  if differ then
    local parts = {}
    for _, p in ipairs(tasks_of) do parts[#parts + 1] = md(p.policy) .. ": " .. md(p.text) end
    d:md("**The policies ran on different tasks** (" .. table.concat(parts, "; ")
      .. "), so the rows above are not comparable with each other: compare them task by task below.")
  end
  convergence(d, units, budget)
  for _, name in ipairs(names) do task_section(d, name, by[name]) end
  return d, title
end

return M
