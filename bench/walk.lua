-- The walk over every lineage: each workload with each policy, resumed from
-- its run folder when one is there (a 10-minute device call walks what it
-- can; the next call goes on, paying no cycle twice). Prints the cost of
-- each walk (gate cycles and seconds, summed over the sessions that made
-- it), the recorded steps and the transforms that explain them, and the
-- steps greedy took first.
--
--   klineage run bench/walk.lua [--backend cuda|emu] [--runs DIR]
--       [--policies recorded,greedy] [--workloads a,b] [--seconds S] [--max_steps N] [--report]
--
-- --seconds: no walk step starts after S seconds (default: no limit).
-- --max_steps: steps per walk at most (default 40, the backward search's).
-- --report: walk nothing; the tables of the walks the run folders hold.
-- Headline figures: explained-share (recorded steps reproduced by one or
-- more undos), greedy-first-agreement (lineages where greedy's first step
-- is the recorded step that paid most; cuda only), walk-cycles and
-- walk-seconds (all walks, all sessions).
local journal = require "klineage.store.journal"
local runs = require "klineage.store.runs"
local search = require "klineage.search"
local workload = require "klineage.workload"
local host = require "kl.host"

local opts = { backend = nil, runs = nil, policies = "recorded,greedy", max_steps = nil, report = nil,
               workloads = "bfs,conv2d,raytrace,reduction,sgemm,softmax,transpose" }
local i = 1
while arg[i] do
  local k = arg[i]:match("^%-%-([%w_]+)$")
  if not k or opts[k] == nil and k ~= "backend" and k ~= "runs" and k ~= "seconds" and k ~= "max_steps" and k ~= "report" then
    io.stderr:write("usage: klineage run bench/walk.lua [--backend cuda|emu] [--runs DIR] [--policies a,b] [--workloads a,b] [--seconds S] [--max_steps N] [--report]\n")
    os.exit(2)
  end
  if k == "report" then opts.report, i = true, i + 1 else opts[k], i = arg[i + 1], i + 2 end
end
local function split(s) local t = {} for x in s:gmatch("[^,]+") do t[#t + 1] = x end return t end
local deadline = opts.seconds and host.clock() + tonumber(opts.seconds)

-- A walk as its journal has it (the steps of every session that made it):
-- the tables are built from the journals, never from this process's memory,
-- so --report gives them back anywhere, with no GPU.
local function from_journal(dir)
  local s = { steps = {}, stopped = "not walked" }
  local cycles, seconds, seen, sessions, order = 0, 0, {}, {}, {}
  for _, r in ipairs((journal.read(dir .. "/journal.jsonl")) or {}) do
    if r.kind == "walk_step" and not seen[r.key] then
      seen[r.key] = true
      s.steps[#s.steps + 1] = { step = math.tointeger(r.step) or r.step, from = r.labels.from, to = r.labels.to, to_sha256 = r.to, effect = r.effect,
                                explained = r.explained, producer = r.producer }
    elseif r.kind == "walk_session" then
      -- The last record of each session counts (journals before sessions
      -- had ids wrote one per session).
      local id = r.session or ("seq" .. tostring(r.seq))
      if not sessions[id] then order[#order + 1] = id end
      sessions[id] = r
      if r.stopped then s.stopped = r.stopped end
    end
  end
  for _, id in ipairs(order) do
    cycles, seconds = cycles + sessions[id].cycles, seconds + sessions[id].seconds
  end
  table.sort(s.steps, function(x, y) return x.step < y.step end)
  return s, cycles, seconds
end

local rows, explained, recorded_steps, all_cycles, all_seconds = {}, 0, 0, 0, 0
local complete = true
for _, name in ipairs(split(opts.workloads)) do
  local w = assert(workload.load(name))
  for _, policy in ipairs(split(opts.policies)) do
    local id = string.format("walk-%s-%s-%s", name, policy, opts.backend or "default")
    local exists = runs.find(id, opts.runs)
    if not opts.report then
      local ctx = assert(require("klineage.device.context").new { backend = opts.backend, journal = opts.runs,
        resume = exists and id or nil, run_id = not exists and id or nil, workloads = { w },
        command = { "klineage", "run", "bench/walk.lua" } })
      local s = assert(search.run(ctx, w, { policy = policy, direction = "backward", deadline = deadline,
                                            max_steps = tonumber(opts.max_steps) }))
      ctx:close()
      io.stderr:write(string.format("walked %s with %s: %d steps, stopped: %s\n", name, policy, #s.steps, s.stopped))
      exists = true
    end
    if exists then
      local s, cycles, seconds = from_journal(assert(runs.find(id, opts.runs)))
      all_cycles, all_seconds = all_cycles + cycles, all_seconds + seconds
      if s.stopped == "deadline" or s.stopped == "budget_exhausted" or s.stopped:match("^the step limit") then complete = false end
      rows[#rows + 1] = { w = name, policy = policy, s = s, cycles = cycles, seconds = seconds }
      if policy == "recorded" then
        for _, st in ipairs(s.steps) do
          recorded_steps = recorded_steps + 1
          if st.explained and st.explained.explained then explained = explained + 1 end
        end
      end
    end
  end
end

local function effect(e)
  if not e then return "-" end
  if not e.measured then return "not measured" end
  return string.format("%.3fx %s", e.speedup or 0, e.outcome or "")
end

print(string.format("%-10s %-9s %5s %7s %9s  %s", "workload", "policy", "steps", "cycles", "seconds", "stopped"))
for _, r in ipairs(rows) do
  print(string.format("%-10s %-9s %5d %7d %9.1f  %s", r.w, r.policy, #r.s.steps, r.cycles, r.seconds, r.s.stopped))
end
print()
print(string.format("%-10s %-4s %-26s %-26s %-22s %s", "workload", "step", "from", "to", "effect", "explained by"))
for _, r in ipairs(rows) do
  for _, st in ipairs(r.s.steps) do
    local x = st.explained
    local why = ""
    if r.policy == "recorded" then
      if x and x.explained then
        local names = {}
        for _, c in ipairs(x.chain) do names[#names + 1] = c.transform .. "(" .. c.key .. ")" end
        why = x.how .. ": " .. table.concat(names, " + ")
      else
        why = "unexplained" .. (x and x.partial_differing and string.format(" (closest: %d facts differ)", x.partial_differing) or "")
      end
    else
      why = (st.producer.kind == "transform" and ("undo " .. st.producer.name) or st.producer.kind)
    end
    print(string.format("%-10s %-4s %-26s %-26s %-22s %s", r.w, r.policy:sub(1, 1) .. st.step, st.from:sub(1, 26),
      st.to:sub(1, 26), effect(st.effect), why))
  end
end
-- Agreement: does greedy take off first what the expert's history shows
-- paid most? Recorded steps rank by their measured speedup; a greedy step
-- is a recorded step when one of the undos that explain that step is the
-- greedy step's own (same transform and site key).
local by = {}
for _, r in ipairs(rows) do by[r.w] = by[r.w] or {}; by[r.w][r.policy] = r.s end
local agree, judged = 0, 0
print()
print(string.format("%-10s %-40s %-40s %s", "workload", "recorded steps by speedup", "greedy's steps, as recorded steps", "first agrees"))
for _, name in ipairs(split(opts.workloads)) do
  local rec, gr = by[name] and by[name].recorded, by[name] and by[name].greedy
  if rec and gr then
    local ranked = {}
    for _, st in ipairs(rec.steps) do
      if st.effect and st.effect.measured then ranked[#ranked + 1] = st end
    end
    table.sort(ranked, function(a, b) return a.effect.speedup > b.effect.speedup end)
    local function recorded_step(g)
      for _, st in ipairs(rec.steps) do
        for _, c in ipairs(st.explained and st.explained.explained and st.explained.chain or {}) do
          if g.producer.kind == "transform" and c.transform == g.producer.name and c.key == g.producer.edit then return st end
        end
      end
    end
    local top, mine = {}, {}
    for i = 1, math.min(3, #ranked) do top[#top + 1] = string.format("%s %.2fx", ranked[i].to:match("^v%d+") or "?", ranked[i].effect.speedup) end
    local first
    for _, g in ipairs(gr.steps) do
      local st = recorded_step(g)
      mine[#mine + 1] = st and (st.to:match("^v%d+") or "?") or "-"
      if first == nil then first = st or false end
    end
    local verdict = "not measured"
    if #ranked > 0 and first ~= nil then
      judged = judged + 1
      if first and first == ranked[1] then agree = agree + 1; verdict = "yes" else verdict = "no" end
    end
    print(string.format("%-10s %-40s %-40s %s", name, table.concat(top, ", "), table.concat(mine, " "):sub(1, 40), verdict))
  end
end
print()
if not complete then print("(some walks stopped at the deadline, the budget or the step limit: run again to resume them)") end
print(string.format("explained-share: %.1f %%", recorded_steps > 0 and 100 * explained / recorded_steps or 0))
print(string.format("explained-steps: %d of %d", explained, recorded_steps))
print(string.format("greedy-first-agreement: %d of %d", agree, judged))
print(string.format("walk-cycles: %d cycles", all_cycles))
print(string.format("walk-seconds: %.1f s", all_seconds))
