-- How far from the roofline an eval's kernels are, read from its journals
-- (no GPU needed): per unit, the naive kernel's share of its roofline as
-- the gate's profile stage measured it (the workload's compulsory bytes at
-- the measured peak bandwidth, or its flops at the fp32 peak, whichever is
-- slower), the ceiling that share leaves (100 % / share: no kernel of the
-- same bytes and flops can be faster over the naive one), the final
-- speedup, and the final kernel's share (naive share x speedup). A suite
-- whose naive kernels already stream at 90 % of the bandwidth cannot give
-- a 3x geomean, whatever the search; this says how much of the room the
-- search took, per part of the suite.
--
--   klineage run bench/eval_roofline.lua EVAL_RUN_DIR [--suite DIR] [--policy NAME]
--
-- EVAL_RUN_DIR: an eval's folder (`klineage eval --journal DIR --run NAME`
-- makes DIR/NAME), one subfolder a unit with its result.json and journal.
-- Headline figures, per part (tune, test) and in all:
--   roofline-ceiling-geomean-PART: X x   the geomean of the ceilings
--   roofline-reached-geomean-PART: X x   the geomean of the final speedups
--   roofline-final-median-PART: P %      the median final share
local journal = require "klineage.store.journal"
local files = require "klineage.base.files"
local fs = require "kl.fs"
local cjson = require "cjson"
local host = require "kl.host"

local USAGE = "usage: klineage run bench/eval_roofline.lua EVAL_RUN_DIR [--suite DIR] [--policy NAME]\n"
local dir, opts, i = nil, { suite = (host.home or ".") .. "/examples/suites/held-out" }, 1
while arg[i] do
  local k = arg[i]:match("^%-%-([%w_]+)$")
  if k and (k == "suite" or k == "policy") and arg[i + 1] then
    opts[k], i = arg[i + 1], i + 2
  elseif not k and not dir then
    dir, i = arg[i], i + 1
  else
    io.stderr:write(USAGE) os.exit(2)
  end
end
if not dir then io.stderr:write(USAGE) os.exit(2) end

local function die(fmt, ...) io.stderr:write("bench/eval_roofline.lua: " .. string.format(fmt, ...) .. "\n") os.exit(2) end

local part_of = {}
do
  local ok, split = pcall(dofile, opts.suite .. "/split.lua")
  if ok and type(split) == "table" then
    for _, p in ipairs({ "tune", "test" }) do
      for _, name in ipairs(split[p] or {}) do part_of[name] = p end
    end
  end
end

-- The input kernel's share of its roofline: the run's first evaluation
-- (the gate judges the input before anything else).
local function naive_share(unit)
  local records, f = journal.read(unit .. "/journal.jsonl")
  if not records then return nil, tostring(f and f.message or f) end
  for _, r in ipairs(records) do
    if r.kind == "evaluation" then
      local p = type(r.stages) == "table" and r.stages.profile
      local share = type(p) == "table" and tonumber(p.pct_of_roofline)
      if share and share > 0 then return share end
      return nil, "the input's evaluation has no profile (not timed)"
    end
  end
  return nil, "no evaluation in the journal"
end

local names, nerr = fs.list(dir)
if not names then die("%s: %s", dir, tostring(nerr)) end
table.sort(names)
local rows, skipped = {}, {}
for _, name in ipairs(names) do
  local unit = dir .. "/" .. name
  local text = files.read_text(unit .. "/result.json")
  if text then
    local ok, res = pcall(cjson.decode, text)
    if ok and type(res) == "table" and (not opts.policy or res.policy == opts.policy) then
      local share, why = naive_share(unit)
      local speedup = tonumber(res.speedup)
      if share and speedup then
        rows[#rows + 1] = { task = res.task, policy = res.policy, part = part_of[res.task] or "-", share = share,
                            ceiling = 100 / share, speedup = speedup, final = share * speedup }
      else
        skipped[#skipped + 1] = string.format("%s: %s", name, why or "no measured speedup")
      end
    end
  end
end
if #rows == 0 then die("no measured unit in %s", dir) end

print("| task | part | policy | naive % of roofline | ceiling | speedup | final % of roofline |")
print("|---|---|---|---|---|---|---|")
for _, r in ipairs(rows) do
  print(string.format("| %s | %s | %s | %.1f | %.2fx | %.2fx | %.1f |", r.task, r.part, r.policy, r.share, r.ceiling, r.speedup, r.final))
end
for _, s in ipairs(skipped) do print("skipped " .. s) end

local function geomean(list, field)
  local sum = 0
  for _, r in ipairs(list) do sum = sum + math.log(r[field]) end
  return math.exp(sum / #list)
end
local function median(list, field)
  local v = {}
  for _, r in ipairs(list) do v[#v + 1] = r[field] end
  table.sort(v)
  local n = #v
  return n % 2 == 1 and v[(n + 1) // 2] or (v[n // 2] + v[n // 2 + 1]) / 2
end
print("")
local figures = {}
for _, part in ipairs({ "tune", "test", "all" }) do
  local list = {}
  for _, r in ipairs(rows) do
    if part == "all" or r.part == part then list[#list + 1] = r end
  end
  if #list > 0 then
    print(string.format("%-5s %2d units: ceiling geomean %.2fx, reached %.2fx, final share median %.1f %%",
      part, #list, geomean(list, "ceiling"), geomean(list, "speedup"), median(list, "final")))
    figures[#figures + 1] = string.format("roofline-ceiling-geomean-%s: %.2f x", part, geomean(list, "ceiling"))
    figures[#figures + 1] = string.format("roofline-reached-geomean-%s: %.2f x", part, geomean(list, "speedup"))
    figures[#figures + 1] = string.format("roofline-final-median-%s: %.1f %%", part, median(list, "final"))
  end
end
print("")
for _, f in ipairs(figures) do print(f) end
