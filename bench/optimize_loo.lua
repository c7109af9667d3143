-- The orchestrator, leave one lineage out: each lineage's v0 optimized
-- (klineage.search, policy klineage, budget 30) with the skills learned from the other six
-- lineages' walk and probe journals, then measured against v0 and against
-- the lineage's expert (the last version), each by the interleaved compare
-- in the same run, and the kept kernel checked again with fresh seeds.
-- Each workload's optimize run and its measurement run are run folders
-- (optimize-loo-<w>-<backend>, measure-loo-<w>-<backend>): a call that
-- runs out of time is resumed by running the same command again.
--
--   klineage run bench/optimize_loo.lua [--backend cuda|emu] [--runs DIR] [--budget 30]
--       [--workloads a,b] [--seconds S] RUN_FOLDER...
--   RUN_FOLDER...: the walk and probe run folders the skills are learned
--   from (reports/walks/*.tar.gz and reports/probes/*.tar.gz, unpacked)
--
-- Per workload: the final speedup over v0, the share of the expert's
-- speedup reached (final / expert), the gate cycles to 90 % of the final
-- speedup (from the journal: each accepted step's compare, multiplied
-- up), and whether the kept kernel passed the re-check. On emu nothing is
-- timed: the speedups are "-" and only correctness is measured.
-- Headline figures: optimize-loo-share-geomean (%), optimize-loo-cycles-to-90
-- (mean), optimize-loo-wrong-accepted.
local context = require "klineage.device.context"
local evaluation = require "klineage.eval"
local extract = require "klineage.skills.extract"
local files = require "klineage.base.files"
local gate = require "klineage.gate"
local learn = require "klineage.skills.learn"
local runs = require "klineage.store.runs"
local search = require "klineage.search"
local workload = require "klineage.workload"
local host = require "kl.host"

local opts = { workloads = "bfs,conv2d,raytrace,reduction,sgemm,softmax,transpose", budget = "30" }
local dirs, i = {}, 1
while arg[i] do
  local k = arg[i]:match("^%-%-([%w_]+)$")
  if k then opts[k], i = arg[i + 1], i + 2 else dirs[#dirs + 1], i = arg[i], i + 1 end
end
if #dirs == 0 then
  io.stderr:write("usage: klineage run bench/optimize_loo.lua [--backend B] [--runs DIR] [--budget N] [--workloads a,b] [--seconds S] RUN_FOLDER...\n")
  os.exit(2)
end
local deadline = opts.seconds and host.clock() + tonumber(opts.seconds)
local observations = extract.folders(dirs)

local function ctx_for(id, budget, w)
  local exists = runs.find(id, opts.runs)
  return assert(context.new { backend = opts.backend, journal = opts.runs, budget = budget, workloads = { w },
    resume = exists and id or nil, run_id = not exists and id or nil, command = { "klineage", "run", "bench/optimize_loo.lua" } })
end

-- Cycles to 90 % of the final speedup, from the optimize run's journal (klineage.eval's curve).
local function cycles_to_90(dir)
  local curve = evaluation.curve(dir)
  return evaluation.cycles_to(curve, curve[#curve][2])
end

local function x(v) return v and string.format("%.2fx", v) or "-" end
print(string.format("%-10s %6s %6s %8s %8s %7s %6s %9s  %s", "workload", "skills", "steps", "final", "expert", "share", "to90",
  "recheck", "stopped"))
local shares, to90s, wrong, complete = {}, {}, 0, true
for name in opts.workloads:gmatch("[^,]+") do
  if deadline and host.clock() >= deadline then complete = false break end
  local w = assert(workload.load(name))
  local train = {}
  for _, o in ipairs(observations) do if o.lineage ~= name then train[#train + 1] = o end end
  local skills = learn.repository(train)
  local v0 = { source = assert(files.read_text(w.dir .. "/" .. w.lineage[1])), label = w.lineage[1], file = w.dir .. "/" .. w.lineage[1] }
  local ctx = ctx_for("optimize-loo-" .. name .. "-" .. (opts.backend or "default"), tonumber(opts.budget), w)
  local s = assert(search.run(ctx, w, { input = v0, skills = skills, policy = "klineage", direction = "forward" }))
  local dir = ctx.run.dir
  ctx:close()
  -- The measurement, in a run of its own: the budget above is the loop's alone.
  local m = ctx_for("measure-loo-" .. name .. "-" .. (opts.backend or "default"), nil, w)
  local final = { source = s.final.source, label = "optimized", kernel = w.kernel, file = w.dir .. "/optimized" }
  local expert = { file = w.dir .. "/" .. w.lineage[#w.lineage], label = w.lineage[#w.lineage], kernel = w.kernel }
  local fs, es
  if m.backend == "cuda" then
    local c = s.final.sha256 ~= require("kl.hash").sha256(v0.source) and gate.compare(m, v0, final, w) or nil
    fs = c and c.speedup or 1
    local e = gate.compare(m, v0, expert, w)
    es = e and e.speedup
  end
  local re = gate.evaluate(m, final, w, { baseline = v0, seeds = { 101, 102, 103 }, random_seeds = 2, profile = false })
  m:close()
  if re.verdict ~= "ok" then wrong = wrong + 1 end
  local share = fs and es and es > 1 and fs / es or nil
  local to90 = cycles_to_90(dir)
  if share then shares[#shares + 1] = share end
  if to90 then to90s[#to90s + 1] = to90 end
  if s.stopped == "budget_exhausted" and #s.steps == 0 then complete = false end
  print(string.format("%-10s %6d %6d %8s %8s %7s %6s %9s  %s", name, #skills, #s.steps, x(fs), x(es),
    share and string.format("%.0f%%", 100 * share) or "-", to90 and tostring(to90) or "-", re.verdict, s.stopped))
end
print()
local function geomean(t)
  if #t == 0 then return nil end
  local l = 0
  for _, v in ipairs(t) do l = l + math.log(v) end
  return math.exp(l / #t)
end
local function mean(t)
  if #t == 0 then return nil end
  local a = 0
  for _, v in ipairs(t) do a = a + v end
  return a / #t
end
if not complete then print("(not every workload ran: run the same command again to go on)") end
local g, c = geomean(shares), mean(to90s)
print("optimize-loo-share-geomean: " .. (g and string.format("%.1f", 100 * g) or "-") .. " %")
print("optimize-loo-cycles-to-90: " .. (c and string.format("%.1f", c) or "-") .. " cycles")
print("optimize-loo-wrong-accepted: " .. wrong .. " kernels")
