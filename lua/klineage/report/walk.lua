-- The walk report: the chain of steps; for each step its diff (unified,
-- the hunks highlighted), the gate's numbers with the backend that made
-- them, the facts that changed, and every candidate judged there with why
-- it was accepted or rejected; then a card for each skill the walk's
-- journal teaches (klineage.skills.extract and learn, said in English by
-- skills.explain and skills.describe).
--
--   walk.build(run) -> doc, title     (the kind contract: report/init.lua)
--
-- Page structure the browser test relies on: each walk_step record (one
-- per key) is <section class="step" id="step-N">, N its step number; a
-- journal of several walks numbers them id="step-<walk>-N" (walks in the
-- order they first appear). Each skill card is <article class="skill-card"
-- data-skill="ID">.
local common = require "klineage.report.common"
local diff = require "klineage.report.diff"
local escape = require "klineage.report.escape"
local svg = require "klineage.report.svg"

local M = {}

local md, code = escape.md, escape.code

local function int(v) return math.tointeger(v) or v end

-- The walks of a journal, in the order they first appear.
local function walks_of(run)
  local walks, by = {}, {}
  local function walk(id)
    if not by[id] then
      by[id] = { id = id, steps = {}, evidence = {}, sessions = {}, order = {}, seen = {} }
      walks[#walks + 1] = by[id]
      by[id].index = #walks
    end
    return by[id]
  end
  for _, r in ipairs(run.records) do
    -- a record without a walk id (an older journal) belongs to one walk of its own
    if tostring(r.kind):match("^walk_") and not r.walk then r = setmetatable({ walk = "" }, { __index = r }) end
    if r.kind == "walk_step" and r.walk then
      local w = walk(r.walk)
      if not w.seen[r.key or r.seq] then
        w.seen[r.key or r.seq] = true
        w.steps[#w.steps + 1] = r
      end
    elseif r.kind == "walk_evidence" and r.walk then
      local w, s = walk(r.walk), int(r.step)
      w.evidence[s] = w.evidence[s] or {}
      table.insert(w.evidence[s], r)
    elseif r.kind == "walk_end" and r.walk then
      walk(r.walk).finish = r
    elseif r.kind == "walk_session" and r.walk then
      local w, id = walk(r.walk), r.session or ("seq" .. tostring(r.seq))
      if not w.sessions[id] then w.order[#w.order + 1] = id end
      w.sessions[id] = r -- the last record of a session counts
    end
  end
  for _, w in ipairs(walks) do
    table.sort(w.steps, function(a, b) return (tonumber(a.step) or 0) < (tonumber(b.step) or 0) end)
    w.cycles, w.seconds = 0, 0
    for _, id in ipairs(w.order) do
      w.cycles, w.seconds = w.cycles + (w.sessions[id].cycles or 0), w.seconds + (w.sessions[id].seconds or 0)
    end
    w.multi = #walks > 1
  end
  return walks
end

local function anchor(w, step)
  if w.multi then return string.format("step-%d-%s", w.index, tostring(int(step))) end
  return "step-" .. tostring(int(step))
end

local function index_run(run)
  local ix = { evaluations = {}, comparisons = {}, labels = {} }
  for _, r in ipairs(run.records) do
    if r.kind == "evaluation" and r.candidate and r.candidate.sha256 then
      ix.evaluations[r.candidate.sha256] = r
      ix.labels[r.candidate.sha256] = ix.labels[r.candidate.sha256] or r.candidate.label
    elseif r.kind == "comparison" and r.a and r.b then
      ix.comparisons[tostring(r.a.sha256) .. ">" .. tostring(r.b.sha256)] = r
    elseif r.kind == "walk_step" and r.labels then
      ix.labels[r.from] = ix.labels[r.from] or r.labels.from
      ix.labels[r.to] = ix.labels[r.to] or r.labels.to
    end
  end
  return ix
end

local function label(ix, sha, fallback)
  return ix.labels[sha] or fallback or (type(sha) == "string" and sha:sub(1, 12)) or "?"
end

-- The gate's failure in one line: the first stage that did not pass.
local function failure_of(e)
  local st = e and e.stages or {}
  for _, name in ipairs({ "compile", "reference", "correct", "profile" }) do
    local s = st[name]
    if s and s.verdict ~= "ok" and s.verdict ~= "skipped" and s.message then
      return name .. ": " .. (tostring(s.message):gsub("\n.*", ""))
    end
  end
  return e and e.message
end

local function explained_text(x)
  if type(x) ~= "table" then return "-" end
  if x.explained then
    local names = {}
    for _, c in ipairs(x.chain or {}) do names[#names + 1] = tostring(c.transform) .. "(" .. tostring(c.key) .. ")" end
    return string.format("%s: %s", tostring(x.how), table.concat(names, " + "))
  end
  return "unexplained" .. (x.partial_differing and string.format(" (closest: %d facts differ)", x.partial_differing) or "")
end

-- A step's schedule delta (search/schedule_delta.lua's summary, in the
-- walk_step record; absent in journals written before it).
local function delta_text(d)
  if type(d) ~= "table" then return "-" end
  if d.explained then
    return (d.how == "kir" and "reproduced by kir: " or "by signature: ") .. tostring(d.text)
  end
  -- the first reason, short: the step's section has them all
  local why = tostring(type(d.unexplained) == "table" and d.unexplained[1] or "?")
  if #why > 70 then why = why:sub(1, 67) .. "..." end
  return "unexplained: " .. why
end

local function deltas_line(w)
  local n, explained, kir = 0, 0, 0
  for _, s in ipairs(w.steps) do
    if type(s.delta) == "table" then
      n = n + 1
      if s.delta.explained then explained = explained + 1 end
      if s.delta.how == "kir" then kir = kir + 1 end
    end
  end
  if n == 0 then return nil end
  return string.format("Schedule deltas: %d of %d steps explained as kernel-IR primitives (%d of them reproduced by kir); "
    .. "each step is read from the simpler kernel to the one before it.", explained, n, kir)
end

-- The chain; its schedule-delta column only where the journal has deltas
-- (walks journaled before them render as they did).
local function chain_md(w, ix, backend)
  local deltas = false
  for _, s in ipairs(w.steps) do if type(s.delta) == "table" then deltas = true end end
  local lines = { "| step | from | to | made by | verdict | effect | time ms | explained |" .. (deltas and " schedule delta |" or ""),
                  "|--:|---|---|---|---|---|--:|---|" .. (deltas and "---|" or "") }
  for _, s in ipairs(w.steps) do
    local labels = s.labels or {}
    lines[#lines + 1] = string.format("| [%s](#%s) | %s | %s | %s | %s | %s | %s | %s |", tostring(int(s.step)), anchor(w, s.step),
      code(label(ix, s.from, labels.from), true), code(label(ix, s.to, labels.to), true), md(common.producer(s.producer)),
      md(s.verdict or "?"), md(common.effect(s.effect)), s.median_ms and string.format("%.4f", s.median_ms) or "-",
      md(explained_text(s.explained))) .. (deltas and (" " .. md(delta_text(s.delta)) .. " |") or "")
  end
  return table.concat(lines, "\n")
end

local function delta_md(d)
  if type(d) ~= "table" then return nil end
  local head
  if d.explained then
    head = string.format("Explained %s as %s.", d.how == "kir" and "and reproduced by kir" or "by the schedule signature",
      code(tostring(d.text), true))
  else
    head = "Not explained as a schedule delta."
  end
  local function value(x) return x == nil and "-" or tostring(int(x)) end
  local rows = { "| feature | simpler | before | accounted for by |", "|---|---|---|---|" }
  for _, c in ipairs(type(d.changed) == "table" and d.changed or {}) do
    rows[#rows + 1] = string.format("| %s | %s | %s | %s |", code(tostring(c.feature), true), md(value(c.before)),
      md(value(c.after)), c.by and code(tostring(c.by), true) or md("no: " .. tostring(c.why)))
  end
  local parts = { head }
  if #rows > 2 then
    parts[#parts + 1] = table.concat(rows, "\n")
  else
    for _, u in ipairs(type(d.unexplained) == "table" and d.unexplained or {}) do parts[#parts + 1] = md(tostring(u)) end
  end
  local k = type(d.kir) == "table" and d.kir
  if k and k.lifted and d.explained and not k.reproduced then
    parts[#parts + 1] = md("kir: " .. tostring(k.sequence or k.why or "not reproduced") .. " does not reproduce it"
      .. ((type(k.differs) == "table" and #k.differs > 0) and (": " .. #k.differs .. " changed features differ") or ""))
  end
  return table.concat(parts, "\n\n")
end

local function charts(d, w, ix)
  local points, bars, timed, measured = {}, {}, false, false
  local first = w.steps[1]
  local e0 = first and ix.evaluations[first.from]
  local p0 = e0 and e0.stages and e0.stages.profile
  if p0 and p0.median_ms then points[#points + 1] = { x = 0, y = p0.median_ms, label = "start" } end
  for _, s in ipairs(w.steps) do
    points[#points + 1] = { x = tonumber(s.step) or #points, y = s.median_ms, label = tostring(int(s.step)) }
    timed = timed or s.median_ms ~= nil
    local e = s.effect or {}
    local ci = type(e.ci) == "table" and e.ci or {}
    bars[#bars + 1] = { label = "step " .. tostring(int(s.step)), value = e.measured and e.speedup or nil, low = ci[1], high = ci[2] }
    measured = measured or (e.measured and e.speedup ~= nil)
  end
  local suffix = w.multi and ("-" .. w.index) or ""
  if timed then
    d:raw(svg.line_chart({ id = "chart-walk-time" .. suffix, title = "The kernel's time after each step (higher: simpler, slower)",
      unit = "ms", x_label = "step", series = { { name = "median time", points = points } } }),
      "*Chart in report.html: the kernel's time after each step (the chain's time column).*")
  end
  if measured then
    d:raw(svg.bar_chart({ id = "chart-walk-effect" .. suffix, title = "Each step's optimization speedup (above 1: the optimization paid)",
      unit = "x", bars = bars, reference = { value = 1, label = "no change" } }),
      "*Chart in report.html: each step's speedup with its interval (the chain's effect column).*")
  end
  if not timed and not measured then
    d:md("No chart: nothing in this walk was timed (the emu backend times nothing).")
  end
end

local function gate_md(e, s, ix, backend)
  if not e then return "The gate's record of this kernel is not in the journal." end
  local st = e.stages or {}
  local rows = {}
  local function add(stage, verdict, numbers)
    rows[#rows + 1] = string.format("| %s | %s | %s | %s |", stage, md(verdict or "-"), numbers, md(e.backend or backend or "?"))
  end
  local c = st.compile
  if c then
    local parts = {}
    for name, fn in pairs(c.functions or {}) do
      parts[#parts + 1] = string.format("%s: %s registers, %s B shared, %s spill stores", code(name, true), tostring(int(fn.registers)),
        tostring(int(fn.smem)), tostring(int(fn.spill_stores)))
    end
    table.sort(parts)
    if c.occupancy then parts[#parts + 1] = string.format("theoretical occupancy %.2f", c.occupancy) end
    add("compile", c.verdict, #parts > 0 and table.concat(parts, "; ") or md(c.message or "-"))
  end
  if st.reference then add("reference", st.reference.verdict, md(st.reference.message or "-")) end
  local k = st.correct
  if k then
    local trials = type(k.trials) == "table" and #k.trials or k.trials
    add("correct", k.verdict, k.verdict == "ok" and string.format("%s trials at %s sizes", tostring(trials or "?"), tostring(int(k.sizes) or "?"))
      or md(k.message or "-"))
  end
  local p = st.profile
  if p then
    if p.median_ms then
      local ci = type(p.ci_ms) == "table" and string.format(" [%.4f, %.4f]", p.ci_ms[1], p.ci_ms[2]) or ""
      add("profile", p.verdict, string.format("%.4f ms%s median, noise %.2f %%, %.1f %% of roofline, SM clock %.0f MHz (%s)", p.median_ms, ci,
        (p.noise or 0) * 100, p.pct_of_roofline or 0, p.clock_mhz or 0, md(p.source or "?")))
    else
      add("profile", p.verdict, md(p.message or "-"))
    end
  end
  local eff = s.effect or {}
  if eff.measured then
    local cmp = ix.comparisons[tostring(s.to) .. ">" .. tostring(s.from)]
    local extra = ""
    if cmp and cmp.result and cmp.result.a and cmp.result.b then
      extra = string.format(", interleaved: %.4f ms (simpler) vs %.4f ms (before), %d samples each", cmp.result.a.median or 0,
        cmp.result.b.median or 0, int(cmp.result.a.n) or 0)
    end
    rows[#rows + 1] = string.format("| compare | %s | %s%s | %s |", md(eff.outcome or "?"), md(common.effect(eff)), extra, md(backend or "?"))
  else
    rows[#rows + 1] = string.format("| compare | - | %s | %s |", md(eff.why or "not measured"), md(backend or "?"))
  end
  return "| stage | verdict | numbers | backend |\n|---|---|---|---|\n" .. table.concat(rows, "\n")
end

local function facts_md(before, after)
  local describe = require "klineage.skills.describe"
  if type(before) ~= "table" or type(after) ~= "table" then return "The facts of this step are not in its record." end
  local names, seen = {}, {}
  for k, v in pairs(before) do
    if after[k] ~= v then names[#names + 1] = k; seen[k] = true end
  end
  for k in pairs(after) do
    if before[k] == nil and not seen[k] then names[#names + 1] = k end
  end
  if #names == 0 then return "No fact changed." end
  table.sort(names)
  local function value(name, v)
    if v == nil then return "absent" end
    return md(describe.value(name, math.type(v) == "float" and math.tointeger(v) or v))
  end
  local lines = { "| fact | before | after |", "|---|--:|--:|" }
  for _, n in ipairs(names) do lines[#lines + 1] = string.format("| %s | %s | %s |", code(n, true), value(n, before[n]), value(n, after[n])) end
  return table.concat(lines, "\n")
end

local function candidates_md(w, s, ix, backend)
  local lines = { "| candidate | verdict | time ms | effect | why |", "|---|---|--:|---|---|" }
  local function row(r, followed)
    local e = ix.evaluations[r.to]
    local why
    if followed then
      why = "passed the gate; the walk followed it"
    elseif r.verdict == "ok" then
      why = "passed the gate; kept as evidence, not followed"
    else
      why = "rejected by the gate: " .. tostring(failure_of(e) or r.verdict)
    end
    lines[#lines + 1] = string.format("| %s | %s | %s | %s | %s |", md(common.producer(r.producer)), md(r.verdict or "?"),
      r.median_ms and string.format("%.4f", r.median_ms) or "-", md(r.effect and common.effect(r.effect) or "-"), md(why))
  end
  row(s, true)
  -- breadth journals the candidate it follows as evidence too: shown once
  local ev = {}
  for _, r in ipairs(w.evidence[int(s.step)] or {}) do
    if r.to ~= s.to then ev[#ev + 1] = r end
  end
  for _, r in ipairs(ev) do row(r, false) end
  local n_ok, n_bad = 0, 0
  for _, r in ipairs(ev) do
    if r.verdict == "ok" then n_ok = n_ok + 1 else n_bad = n_bad + 1 end
  end
  local head = string.format("%d candidate%s judged at this step besides the one followed: %d passed the gate, %d did not.", #ev,
    #ev == 1 and "" or "s", n_ok, n_bad)
  return head .. "\n\n" .. table.concat(lines, "\n")
end

local function step_section(d, run, w, s, ix, backend)
  local id = anchor(w, s.step)
  d:raw(string.format('<section class="step" id="%s">', escape.html(id)))
  local labels = s.labels or {}
  local from, to = label(ix, s.from, labels.from), label(ix, s.to, labels.to)
  d:md(string.format("### Step %s: %s → %s", tostring(int(s.step)), code(from), code(to)))
  d:md(string.format("Made by %s. Verdict: %s. Effect: %s.%s", md(common.producer(s.producer)), md(s.verdict or "?"),
    md(common.effect(s.effect, backend)), s.explained and (" Explained: " .. md(explained_text(s.explained)) .. ".") or ""))
  d:md("#### The diff\n\nFrom the kernel before the step (-) to the simpler one (+); marks show the text each change touches.")
  local a, b = run.source(s.from), run.source(s.to)
  if a and b then
    local u, f = diff.unified(a, b, { old_name = from, new_name = to })
    if u then
      d:md(string.format("%d hunk%s: %d line%s removed, %d added.", u.hunks, u.hunks == 1 and "" or "s", u.lines.removed,
        u.lines.removed == 1 and "" or "s", u.lines.added))
      d:raw(u.html, escape.code_block(u.text, "diff"))
    else
      d:md(md(f.message))
    end
  else
    d:md("The kernels' text is not in the run folder's src/.")
  end
  d:md("#### The gate's numbers\n\n" .. gate_md(ix.evaluations[s.to], s, ix, backend))
  local dm = delta_md(s.delta)
  if dm then d:md("#### The schedule delta\n\nThe optimization this step removes, read from the simpler kernel to the one before it.\n\n" .. dm) end
  d:md("#### Facts that changed\n\n" .. facts_md(s.facts_before, s.facts_after))
  d:md("#### Candidates at this step\n\n" .. candidates_md(w, s, ix, backend))
  d:raw("</section>")
end

-- Where a skill's evidence was judged: a step's section of this page.
local function evidence_anchors(walks)
  local at = {}
  for _, w in ipairs(walks) do
    for _, s in ipairs(w.steps) do
      if s.key then at[s.key] = anchor(w, s.step) end
    end
    for step, list in pairs(w.evidence) do
      for _, r in ipairs(list) do
        if r.key then at[r.key] = anchor(w, step) end
      end
    end
  end
  return at
end

local function refs_md(list, at)
  local out, seen = {}, {}
  for _, ev in ipairs(list or {}) do
    local a = ev.key and at[ev.key]
    if a and not seen[a] then
      seen[a] = true
      out[#out + 1] = a
    end
  end
  -- in the page's order: step-2 before step-10, walk by walk
  local function key(a)
    local nums = {}
    for n in a:gmatch("%d+") do nums[#nums + 1] = string.format("%09d", tonumber(n)) end
    return table.concat(nums, ".")
  end
  table.sort(out, function(x, y) return key(x) < key(y) end)
  for i, a in ipairs(out) do out[i] = string.format("[%s](#%s)", (a:gsub("%-", " ")), a) end
  return #out > 0 and (" — evidence: " .. table.concat(out, ", ")) or ""
end

local function card(d, r, at)
  local describe = require "klineage.skills.describe"
  local lines = {}
  for line in (require("klineage.skills.explain").skill(r) .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = line end
  local function line_starting(prefix)
    for _, l in ipairs(lines) do
      if l:sub(1, #prefix) == prefix then return l end
    end
  end
  d:raw(string.format('<article class="skill-card" data-skill="%s">', escape.html(r.id)))
  d:md("### Skill " .. code(r.id))
  d:md(md(lines[1] or r.id))
  d:md("**Intent:** " .. md(r.intent))
  local applied = line_starting("Applied by:")
  if applied then d:md(md(applied)) end
  if #r.preconditions == 0 then
    d:md("**Applies when:** always: no precondition was learned.")
  else
    local items = { "**Applies when** (all hold):", "" }
    for _, c in ipairs(r.preconditions) do
      local s = c.support
      items[#items + 1] = "- " .. md(describe.condition(c)) .. (s and md(string.format(" (%d helped, %d did not)", s.helped, s.not_helped)) or "")
        .. refs_md(c.evidence, at)
    end
    d:md(table.concat(items, "\n"))
  end
  if #r.guards > 0 then
    local items = { "**Not when** (a guard blocks it):", "" }
    for _, g in ipairs(r.guards) do
      items[#items + 1] = "- " .. md(describe.condition(g)) .. (g.why and g.why ~= "" and (": " .. md(g.why)) or "") .. refs_md(g.evidence, at)
    end
    d:md(table.concat(items, "\n"))
  else
    d:md("**Not when:** no guard was learned.")
  end
  local effect = line_starting("Effect:")
  if effect then d:md(md(effect)) end
  if r.confidence and r.confidence.why then d:md(md(r.confidence.why)) end
  local items = { "**Evidence:**", "" }
  for _, ev in ipairs(r.evidence) do
    local what = table.concat({ tostring(ev.lineage or ""), tostring(ev.step or "") }, " ")
    local result = {}
    if ev.outcome then result[#result + 1] = ev.outcome end
    if ev.speedup then result[#result + 1] = string.format("%.3fx", ev.speedup) end
    items[#items + 1] = "- " .. md(what) .. (#result > 0 and (": " .. md(table.concat(result, ", "))) or "") .. refs_md({ ev }, at)
  end
  if #r.evidence == 0 then items[#items + 1] = "none recorded" end
  d:md(table.concat(items, "\n"))
  for _, u in ipairs(r.unexplained or {}) do
    d:md("Unexplained: " .. md(u.why or "") .. refs_md(u.evidence, at))
  end
  d:raw("</article>")
end

local function skills(d, run, walks)
  d:md("## Skills\n\nEach simplification the walk judged, inverted, is an observation of an optimization; these are the skills "
    .. "learned from this journal alone (the shipped repository learns from every walk at once).")
  local ok, obs, problems = pcall(require("klineage.skills.extract").folder, run.dir)
  if not ok then
    d:md("The skills could not be extracted: " .. md((tostring(obs):gsub("\n.*", ""))))
    return
  end
  for _, p in ipairs(problems or {}) do d:md("> " .. md(p.message)) end
  if #obs == 0 then
    d:md("No skill: the journal holds no judged simplification to learn from.")
    return
  end
  local lok, records = pcall(require("klineage.skills.learn").repository, obs, { arch = run.first.arch })
  if not lok then
    d:md("The skills could not be learned: " .. md((tostring(records):gsub("\n.*", ""))))
    return
  end
  local at = evidence_anchors(walks)
  for _, r in ipairs(records) do card(d, r, at) end
end

local function policy_of(run)
  local cmd = type(run.first.command) == "table" and run.first.command or {}
  for i, a in ipairs(cmd) do
    if a == "--policy" then return cmd[i + 1] end
    local p = tostring(a):match("^%-%-policy=(.*)$")
    if p then return p end
  end
end

function M.build(run)
  local d = require("klineage.report.doc").new()
  local walks, ix = walks_of(run), index_run(run)
  local backend = run.first.backend
  local policy = policy_of(run)
  local title = string.format("Walk: %s%s", run.workload or "?", policy and (", policy " .. policy) or "")
  d:md("# " .. md(title))
  d:md(common.run_facts(run))
  if common.times_nothing(backend) then d:md("The " .. backend .. " backend checks correctness only: no step's effect is measured and nothing is timed.") end
  if #walks == 0 then d:md("The journal holds no walk step.") end
  for _, w in ipairs(walks) do
    local fin = w.finish
    d:md(string.format("## %s\n\n%d step%s; stopped: %s. %d gate cycles and %.1f s over %d session%s.",
      w.multi and ("Walk " .. w.index) or "The chain", #w.steps, #w.steps == 1 and "" or "s",
      md(fin and fin.stopped or "not finished (the walk may be resumed)"), w.cycles, w.seconds, #w.order, #w.order == 1 and "" or "s"))
    if #w.steps > 0 then
      d:md(chain_md(w, ix, backend))
      local dl = deltas_line(w)
      if dl then d:md(dl) end
      charts(d, w, ix)
    end
    for _, s in ipairs(w.steps) do step_section(d, run, w, s, ix, backend) end
  end
  skills(d, run, walks)
  return d, title
end

return M
