-- How good is the "when"? Leave one lineage out: learn the skills from the
-- walks of the other six, then, for every measured application in the
-- seventh's walks of a skill learned without it, predict "helps" from the
-- preconditions and guards, and score the prediction against what the
-- walk measured (the interleaved compare of the step). The comparison is
-- the same skills with no conditions: "helps" wherever the pattern matched.
-- The applications scored are those the run folders hold: the walks' own
-- (each judged simplification, inverted) and, given probe run folders
-- (klineage skills probe), the skills applied forward in other versions
-- and the recorded steps timed at other sizes.
--
--   klineage run bench/skills_loo.lua RUN_FOLDER...
--   e.g. the shipped journals: tar xzf reports/walks/h200-2026-12-02b.tar.gz
--   and reports/probes/h200-2026-12-02.tar.gz into D, then
--   klineage run bench/skills_loo.lua D/h200-2026-12-02/walk-* D/probes/probe-*
--
-- Headline figures: loo-precision, loo-recall, loo-precision-unconditioned,
-- loo-recall-unconditioned (%), loo-predictions.
local extract = require "klineage.skills.extract"
local learn = require "klineage.skills.learn"

local dirs = {}
for i = 1, #arg do dirs[#dirs + 1] = arg[i] end
if #dirs == 0 then
  io.stderr:write("usage: klineage run bench/skills_loo.lua RUN_FOLDER...\n")
  os.exit(2)
end
local observations, problems = extract.folders(dirs)
for _, p in ipairs(problems) do io.stderr:write("skipped: ", p.path, ": ", p.message, "\n") end

local lineages, seen = {}, {}
for _, o in ipairs(observations) do
  if not seen[o.lineage] then seen[o.lineage] = true lineages[#lineages + 1] = o.lineage end
end
table.sort(lineages)

local SCORED = { helped = true, no_difference = true, hurt = true }
local function counts() return { tp = 0, fp = 0, fn = 0, tn = 0 } end
local function add(c, predicted, actual)
  if predicted and actual then c.tp = c.tp + 1 elseif predicted then c.fp = c.fp + 1
  elseif actual then c.fn = c.fn + 1 else c.tn = c.tn + 1 end
end
local function pct(a, b) return b > 0 and 100 * a / b or nil end
local function show(x) return x and string.format("%.1f", x) or "-" end

local total, plain = counts(), counts()
print(string.format("%-10s %6s %6s %5s %5s %5s %5s %9s %9s %9s %9s", "held out", "skills", "scored", "tp", "fp", "fn", "tn",
  "precision", "recall", "prec(any)", "rec(any)"))
for _, held in ipairs(lineages) do
  local train = {}
  for _, o in ipairs(observations) do
    if o.lineage ~= held then train[#train + 1] = o end
  end
  local by_id = {}
  for _, r in ipairs(learn.repository(train)) do by_id[r.id] = r end
  local c, u, n = counts(), counts(), 0
  for _, o in ipairs(observations) do
    local r = o.lineage == held and by_id[o.skill]
    if r and o.measured and SCORED[o.outcome] then
      n = n + 1
      local admits = learn.admits(r, learn.values(o))
      local helped = o.outcome == "helped"
      add(c, admits, helped); add(total, admits, helped)
      add(u, true, helped); add(plain, true, helped)
    end
  end
  local skills = 0
  for _ in pairs(by_id) do skills = skills + 1 end
  print(string.format("%-10s %6d %6d %5d %5d %5d %5d %9s %9s %9s %9s", held, skills, n, c.tp, c.fp, c.fn, c.tn,
    show(pct(c.tp, c.tp + c.fp)), show(pct(c.tp, c.tp + c.fn)), show(pct(u.tp, u.tp + u.fp)), show(pct(u.tp, u.tp + u.fn))))
end
print(string.format("%-10s %6s %6d %5d %5d %5d %5d %9s %9s %9s %9s", "all", "", total.tp + total.fp + total.fn + total.tn,
  total.tp, total.fp, total.fn, total.tn, show(pct(total.tp, total.tp + total.fp)), show(pct(total.tp, total.tp + total.fn)),
  show(pct(plain.tp, plain.tp + plain.fp)), show(pct(plain.tp, plain.tp + plain.fn))))
print()
print("loo-precision: " .. show(pct(total.tp, total.tp + total.fp)) .. " %")
print("loo-recall: " .. show(pct(total.tp, total.tp + total.fn)) .. " %")
print("loo-precision-unconditioned: " .. show(pct(plain.tp, plain.tp + plain.fp)) .. " %")
print("loo-recall-unconditioned: " .. show(pct(plain.tp, plain.tp + plain.fn)) .. " %")
print("loo-predictions: " .. (total.tp + total.fp + total.fn + total.tn) .. " applications")
