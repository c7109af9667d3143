-- What the kernel IR's schedules buy on a suite, before any search: every
-- task's naive kernel lifted (lua/klineage/kir), each legal sequence of
-- primitives (kir.sequences, up to --depth primitives, at most --limit a
-- task) emitted and judged by the gate against the naive kernel (on cuda
-- also the interleaved compare: the speedup over the naive kernel). It is
-- the exhaustive ceiling a schedule search can reach at that depth, and
-- what each primitive family brings; never a search result.
--
--   klineage run bench/schedules.lua [--suite DIR] [--part tune|test|all]
--       [--tasks a,b] [--depth 1|2] [--limit N] [--backend cuda|emu]
--       [--runs DIR] [--seconds S] [--replay]
--
-- --part: the suite's split (split.lua: tune, the tasks development may
-- look at; test, the ones kept out of every decision); default tune.
-- --runs: a runs folder; the run "bench-schedules-<part>-<backend>" there
-- is resumed, so a judgement made by an earlier (cut short) call is read
-- back from its journal, uncharged. --seconds: no task starts after S s.
-- --replay (with --runs): judge again exactly the schedules that run's
-- journal holds, with the kernels it holds, not what today's kir
-- enumerates: a published table, made by an older kir, read back as it was.
-- Headline figures: schedules-lifted (tasks whose kernel lifts),
-- schedules-correct (judged candidates the gate accepted), and on cuda
-- schedules-best-geomean (per task the best accepted speedup, 1 where
-- none is faster) and schedules-best-2x (tasks whose best is 2x or more).
local gate = require "klineage.gate"
local files = require "klineage.base.files"
local hash = require "kl.hash"
local kir = require "klineage.kir"
local workload = require "klineage.workload"
local host = require "kl.host"

local opts = { suite = (host.home or ".") .. "/examples/suites/held-out", part = "tune", depth = "1", limit = "12" }
local USAGE = "usage: klineage run bench/schedules.lua [--suite DIR] [--part tune|test|all] [--tasks a,b] "
  .. "[--depth 1|2] [--limit N] [--backend cuda|emu] [--runs DIR] [--seconds S] [--replay]\n"
local i = 1
while arg[i] do
  local k = arg[i]:match("^%-%-([%w_]+)$")
  if k == "replay" then
    opts.replay, i = true, i + 1
  elseif not k or not arg[i + 1] or not (opts[k] ~= nil or k == "tasks" or k == "backend" or k == "runs" or k == "seconds") then
    io.stderr:write(USAGE)
    os.exit(2)
  else
    opts[k], i = arg[i + 1], i + 2
  end
end
local depth, limit = tonumber(opts.depth), tonumber(opts.limit)
if not depth or depth < 1 or depth > 3 or not limit or limit < 1 or not ({ tune = 1, test = 1, all = 1 })[opts.part] then
  io.stderr:write(USAGE)
  os.exit(2)
end
local deadline = opts.seconds and host.clock() + tonumber(opts.seconds)

local function split(s) local t = {} for x in s:gmatch("[^,]+") do t[#t + 1] = x end return t end
local tasks
if opts.tasks then
  tasks = split(opts.tasks)
else
  local ok, parts = pcall(dofile, opts.suite .. "/split.lua")
  if not ok then io.stderr:write("bench/schedules.lua: no split.lua in " .. opts.suite .. "; give --tasks\n") os.exit(2) end
  tasks = opts.part == "all" and {} or { table.unpack(parts[opts.part]) }
  if opts.part == "all" then
    for name in pairs(parts.families) do tasks[#tasks + 1] = name end
  end
  table.sort(tasks)
end

-- With --runs, one run folder per (part, depth, backend), resumed when there.
local id = string.format("bench-schedules-%s-d%d-%s", opts.tasks and "tasks" or opts.part, depth, opts.backend or "default")
local exists = opts.runs and require("klineage.store.runs").find(id, opts.runs)
local ctx = assert(require("klineage.device.context").new {
  backend = opts.backend, journal = opts.runs or false, resume = exists and id or nil,
  run_id = opts.runs and not exists and id or nil, command = { "klineage", "run", "bench/schedules.lua" } })
-- --replay: the schedules of each task the journal judged, in its order
local journaled
if opts.replay then
  if not exists then
    io.stderr:write("bench/schedules.lua: --replay needs --runs DIR holding the run " .. id .. "\n")
    os.exit(2)
  end
  journaled = {}
  local cjson = require "cjson"
  for line in io.lines(exists .. "/journal.jsonl") do
    local ok, r = pcall(cjson.decode, line)
    local c = ok and type(r) == "table" and r.kind == "evaluation" and type(r.candidate) == "table" and r.candidate or nil
    local text = c and type(c.label) == "string" and c.label:match("^schedule (.+)$")
    local task = text and type(r.workload) == "table" and r.workload.name
    -- a hostile journal names no file outside its own src/
    local sha = task and type(c.source) == "string" and c.source:match("^src/(%x+)%.cu$")
    if sha then
      local list = journaled[task] or {}
      journaled[task] = list
      if not list[text] then
        list[text] = true
        list[#list + 1] = { text = text, file = exists .. "/" .. c.source, sha256 = sha }
      end
    end
  end
end
io.stderr:write(string.format("bench/schedules: %d tasks (%s), depth %d, at most %d a task, on %s\n",
  #tasks, opts.tasks and "--tasks" or opts.part, depth, limit, ctx.backend))

local function family_of(text) return text:match("^(%w+)") or "?" end
local rows, lifted, judged, accepted = {}, 0, 0, 0
local by_family = {}
for _, name in ipairs(tasks) do
  if deadline and host.clock() > deadline then
    rows[#rows + 1] = { task = name, note = "not started: --seconds" }
    goto next_task
  end
  do
    local w, wf = workload.load(opts.suite .. "/" .. name .. "/workload.lua")
    if not w then
      rows[#rows + 1] = { task = name, note = "bad spec: " .. tostring(wf and wf.message or wf) }
      goto next_task
    end
    local naive = { file = w.dir .. "/kernel.cu", kernel = w.kernel, label = "kernel.cu" }
    naive.source = assert(io.open(naive.file)):read("a")
    local k, why = kir.lift(naive.source, { kernel = w.kernel })
    if not k then
      rows[#rows + 1] = { task = name, note = "does not lift: " .. tostring(why) }
      goto next_task
    end
    lifted = lifted + 1
    local row = { task = name, tried = 0, ok = 0, best = 1, best_text = "-" }
    local seqs = {}
    if journaled then
      -- today's sequences whose kernel the journal judged (two sequences
      -- that emit one kernel were judged once, under the first's label),
      -- then the journal's own that today's kir no longer emits
      local want, seen = {}, {}
      for _, e in ipairs(journaled[name] or {}) do want[e.sha256] = e end
      for _, seq in ipairs(kir.sequences(k, depth, math.huge)) do
        local text = kir.emit(seq.kernel)
        local e = text and want[hash.sha256(text)]
        if e and #seqs < limit then
          seqs[#seqs + 1] = { text = seq.text, source = text }
          seen[e.text] = true
        end
      end
      for _, e in ipairs(journaled[name] or {}) do
        if not seen[e.text] then seqs[#seqs + 1] = { text = e.text, source = files.read_text(e.file) } end
      end
    else
      for _, seq in ipairs(kir.sequences(k, depth, limit)) do seqs[#seqs + 1] = { text = seq.text, source = kir.emit(seq.kernel) } end
    end
    for _, seq in ipairs(seqs) do
      local text = seq.source
      if text then
        row.tried, judged = row.tried + 1, judged + 1
        local label = "schedule " .. seq.text
        local r = gate.judge(ctx, { source = text, kernel = w.kernel, label = label, file = w.dir .. "/" .. label }, w,
          { baseline = naive, against = naive })
        local fam = family_of(seq.text)
        by_family[fam] = by_family[fam] or { tried = 0, ok = 0, best_of = 0, speedups = {} }
        local f = by_family[fam]
        f.tried = f.tried + 1
        if r.verdict == "ok" then
          row.ok, accepted, f.ok = row.ok + 1, accepted + 1, f.ok + 1
          local s = r.effect.measured and r.effect.speedup or nil
          if s then f.speedups[#f.speedups + 1] = s end
          if s and s > row.best then row.best, row.best_text, row.best_family = s, seq.text, fam end
        end
        io.stderr:write(string.format("  %-18s %-44s %-10s %s\n", name, seq.text:sub(1, 44), r.verdict,
          r.effect.measured and string.format("%.2fx", r.effect.speedup) or "-"))
      end
    end
    if row.best_family then by_family[row.best_family].best_of = by_family[row.best_family].best_of + 1 end
    rows[#rows + 1] = row
  end
  ::next_task::
end

print("| task | judged | correct | best schedule | speedup |")
print("|---|---|---|---|---|")
local logsum, timed_tasks, two_x = 0, 0, 0
for _, r in ipairs(rows) do
  if r.note then
    print(string.format("| %s | - | - | %s | - |", r.task, r.note))
  else
    local shown = ctx.timed and string.format("%.2fx", r.best) or "-"
    print(string.format("| %s | %d | %d | %s | %s |", r.task, r.tried, r.ok, r.best_text, shown))
    if ctx.timed then
      timed_tasks = timed_tasks + 1
      logsum = logsum + math.log(r.best)
      if r.best >= 2 then two_x = two_x + 1 end
    end
  end
end
print()
print("| family (first primitive) | judged | correct | best on tasks | median speedup |")
print("|---|---|---|---|---|")
local fams = {}
for f in pairs(by_family) do fams[#fams + 1] = f end
table.sort(fams)
for _, f in ipairs(fams) do
  local e = by_family[f]
  table.sort(e.speedups)
  local med = #e.speedups > 0 and string.format("%.2fx", e.speedups[(#e.speedups + 1) // 2]) or "-"
  print(string.format("| %s | %d | %d | %d | %s |", f, e.tried, e.ok, e.best_of, med))
end
print()
print(string.format("machine: %s backend%s", ctx.backend, ctx.timed and "" or " (nothing timed: speedups are -)"))
print(string.format("schedules-lifted: %d/%d tasks", lifted, #tasks))
print(string.format("schedules-correct: %d/%d candidates", accepted, judged))
if ctx.timed and timed_tasks > 0 then
  print(string.format("schedules-best-geomean: %.2f x", math.exp(logsum / timed_tasks)))
  print(string.format("schedules-best-2x: %d/%d tasks", two_x, timed_tasks))
end
ctx:close()
