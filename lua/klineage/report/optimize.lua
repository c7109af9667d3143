-- The optimize report: for the kernel, every skill that was considered at
-- each step, and what became of it: applied (with the facts that allowed
-- it), skipped (the precondition or guard that blocked it), rejected (the
-- gate's verdict or the compare), or not materialized; then the final
-- diff against the input and the convergence chart (the kernel's time
-- against the gate cycles spent, on cuda).
--
--   optimize.build(run) -> doc, title     (the kind contract: report/init.lua)
--
-- Page structure the browser test relies on: each step of the loop is
-- <section class="step" id="step-N">, one per step that judged anything.
local common = require "klineage.report.common"
local diff = require "klineage.report.diff"
local escape = require "klineage.report.escape"
local svg = require "klineage.report.svg"

local M = {}

local md, code = escape.md, escape.code

local function int(v) return math.tointeger(v) or v end

local ORDER = { applied = 1, rejected = 2, not_materialized = 3, skipped = 4 }
local HEADING = { applied = "Applied", rejected = "Tried and rejected", not_materialized = "Not materialized",
                  skipped = "Skipped" }

local function index(run)
  local ix = { steps = {}, decisions = {}, taken = {}, evaluations = {}, order = {} }
  local seen = {}
  for _, r in ipairs(run.records) do
    if r.key and seen[r.key] then goto next end
    if r.key then seen[r.key] = true end
    if r.kind == "decision" then
      local s = int(r.step)
      if not ix.decisions[s] then ix.decisions[s] = {} ix.order[#ix.order + 1] = s end
      table.insert(ix.decisions[s], r)
    elseif r.kind == "optimize_step" then
      -- A policy that keeps several a step (a beam) keeps its best first;
      -- the others show among the step's applied decisions.
      ix.taken[int(r.step)] = ix.taken[int(r.step)] or r
    elseif r.kind == "optimize_end" then
      ix.finish = r
    elseif r.kind == "evaluation" and r.candidate and r.candidate.sha256 then
      ix.evaluations[#ix.evaluations + 1] = r
      ix.by_sha = ix.by_sha or {}
      ix.by_sha[r.candidate.sha256] = r
    end
    ::next::
  end
  table.sort(ix.order)
  return ix
end

local function median_ms(ev)
  local p = ev and ev.stages and ev.stages.profile
  return p and p.verdict == "ok" and tonumber(p.median_ms) or nil
end

-- Best time so far against the cycles spent: each evaluation is a cycle.
local function convergence(d, ix)
  local points, best = {}, nil
  for i, ev in ipairs(ix.evaluations) do
    local t = median_ms(ev)
    if t and ev.verdict == "ok" and (not best or t < best) then best = t end
    if best then points[#points + 1] = { x = i, y = best, label = ev.candidate.label } end
  end
  if #points < 2 then
    d:md("No convergence chart: fewer than two candidates were timed (the emu backend times nothing).")
    return
  end
  d:raw(svg.line_chart({ id = "chart-optimize-convergence", title = "Best correct time so far against gate cycles",
                         unit = "ms", x_label = "gate cycles (evaluations)", series = { { name = "best so far", points = points } } }))
end

local function decision_line(r)
  local site = r.site and (" at " .. code(tostring(r.site))) or ""
  local line = string.format("- **%s**%s: %s", md(r.skill or "?"), site, md(r.why or ""))
  if r.status == "applied" or r.status == "rejected" then
    -- A schedule's reasons are the legality checks of its primitives, not a skill's conditions.
    local lead = r.schedule and "" or (r.status == "applied" and "allowed by " or "admitted by ")
    if type(r.schedule) == "string" then line = line .. "\n  - schedule " .. code(r.schedule) end
    for _, b in ipairs(type(r.because) == "table" and r.because or {}) do
      line = line .. "\n  - " .. lead .. md(tostring(b))
    end
    local p = r.predicted
    if type(p) == "table" and type(p.speedup) == "number" then
      line = line .. string.format("\n  - predicted by the static model: %.2fx (%s)", p.speedup, md(tostring(p.why or "")))
    end
    local q = r.prior
    if type(q) == "table" and type(q.factor) == "number" and type(q.skills) == "table" and #q.skills > 0 then
      line = line .. string.format("\n  - weighed by the schedule skills: %.2fx (%s)", q.factor, md(tostring(q.why or "")))
    end
  end
  return line
end

local function step_section(d, run, ix, s, input)
  d:raw(string.format('<section class="step" id="step-%s">', escape.html(tostring(s))))
  local taken = ix.taken[s]
  d:md(string.format("## Step %s%s", tostring(s), taken and (": " .. md(taken.skill)) or ": nothing accepted"))
  if taken then
    d:md("Effect: " .. md(common.effect(taken.effect, run.first.backend)) .. ".")
    local before = taken.from == input.sha and input.text or run.source(taken.from)
    local after = run.source(taken.to)
    if before and after then
      local u = diff.unified(before, after, { old_name = "before", new_name = "after" })
      if u then d:raw(u.html, escape.code_block(u.text, "diff")) end
    end
  end
  local list = ix.decisions[s]
  table.sort(list, function(a, b)
    if ORDER[a.status] ~= ORDER[b.status] then return (ORDER[a.status] or 9) < (ORDER[b.status] or 9) end
    return tostring(a.skill) < tostring(b.skill)
  end)
  local current
  for _, r in ipairs(list) do
    if r.status ~= current then
      current = r.status
      d:md("### " .. (HEADING[r.status] or md(tostring(r.status))))
    end
    d:md(decision_line(r))
  end
  d:raw("</section>")
end

function M.build(run)
  local d = require("klineage.report.doc").new()
  local ix = index(run)
  local backend = run.first.backend
  local title = string.format("Optimize: %s", run.workload or "?")
  d:md("# " .. md(title))
  d:md(common.run_facts(run))
  if not common.timed(backend) then
    -- Said without the keep rule itself: the rule has changed between
    -- versions, and a report rendered today from an older journal must not
    -- describe its decisions by today's rule. Each decision's why does.
    d:md(string.format("The %s backend checks correctness only: no effect was measured here. Whether a correct candidate "
      .. "was kept, and on what evidence (a skill's speedups measured in the walks, a schedule's predicted gain), each "
      .. "decision says in its own words.", md(backend or "?")))
  end
  local first = ix.evaluations[1]
  local input = { sha = first and first.candidate.sha256 }
  input.text = input.sha and run.source(input.sha)
  local steps = {}
  for s, t in pairs(ix.taken) do steps[#steps + 1] = { s = s, t = t } end
  table.sort(steps, function(a, b) return a.s < b.s end)
  d:md(string.format("%d step%s accepted, %d decisions; stopped: %s.", #steps, #steps == 1 and "" or "s",
    (function() local n = 0 for _, l in pairs(ix.decisions) do n = n + #l end return n end)(),
    md(ix.finish and ix.finish.stopped or "not finished (the run may be resumed)")))
  if #steps > 0 then
    local rows = { "| step | skill | site | effect |", "|---|---|---|---|" }
    for _, x in ipairs(steps) do
      rows[#rows + 1] = string.format("| %s | %s | %s | %s |", tostring(x.s), md(x.t.skill), code(tostring(x.t.site), true),
        md(common.effect(x.t.effect, backend)))
    end
    d:md(table.concat(rows, "\n"))
  end
  convergence(d, ix)
  if ix.finish and input.text then
    local final = run.source(ix.finish.final)
    if final and final ~= input.text then
      d:md("## The final kernel against the input")
      local u = diff.unified(input.text, final, { old_name = "input", new_name = "optimized" })
      if u then d:raw(u.html, escape.code_block(u.text, "diff")) end
    end
  end
  for _, s in ipairs(ix.order) do step_section(d, run, ix, s, input) end
  return d, title
end

return M
