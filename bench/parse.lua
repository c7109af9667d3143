-- Benchmark of kl.source: lex+parse and round-trip throughput over a corpus
-- of at least 10,000 lines of CUDA, built deterministically from the
-- repository's .cu files (gpu/, tests/), replicated with renamed kernels.
--
--   klineage run bench/parse.lua [MIN_LINES] [SECONDS]
--
-- Prints a table, then `parse-throughput: N MB/s`, `parse-throughput-5mb:
-- N MB/s` (one unit of 5 MB: the same files replicated) and
-- `roundtrip-throughput: N MB/s` from the best of 5 batches in the process's
-- CPU time (the table also shows the median batch and the wall-clock rate,
-- which drop when the machine is shared). A benchmark, not a test.
--
-- Each measure runs in a fresh klineage process (`--measure NAME`): in one
-- process the allocator's state left by one measure (glibc's dynamic mmap
-- and trim thresholds) changes the page faults of the next by up to 40%.
local source = require "kl.source"
local host = require "kl.host"

local only -- the measure a child process runs
if arg[1] == "--measure" then
  only = arg[2]
  table.remove(arg, 1)
  table.remove(arg, 1)
end
local min_lines = tonumber(arg[1]) or 10000
local min_seconds = tonumber(arg[2]) or 1.0

local script = arg[0] or "bench/parse.lua"
local root = script:match("^(.*)/bench/[^/]*$") or "."

-- The .cu files under gpu/ and tests/ in path order (klineage.base.files.walk,
-- the walk klineage match uses: no other program sees the paths).
local function cu_files()
  local list = {}
  for _, e in ipairs(require("klineage.base.files").walk({ root .. "/gpu", root .. "/tests" }, { ".cu" })) do
    if e.size then list[#list + 1] = e.path end
  end
  return list
end

-- Files with an unterminated comment or literal (the garbage cases) are
-- left out: concatenated, one would swallow the files after it.
local function unterminated(text)
  local unit, diags = source.parse(text)
  unit:close()
  for _, d in ipairs(diags) do
    if d.id == "KLS005" then return true end
  end
  return false
end

local files, texts = {}, {}
for _, path in ipairs(cu_files()) do
  local h = assert(io.open(path, "rb"))
  local text = h:read("a")
  h:close()
  if not unterminated(text) then
    files[#files + 1] = path
    texts[#texts + 1] = text
  end
end
assert(#files > 0, "no .cu files under " .. root)

-- Replicate with variations until the corpus is long enough: each copy
-- renames its kernels so no two copies are identical text.
local parts, lines, copy = {}, 0, 0
while lines < min_lines do
  copy = copy + 1
  for _, text in ipairs(texts) do
    local varied = text:gsub("(__global__%s+void%s+)([%w_]+)", "%1%2_v" .. copy)
    parts[#parts + 1] = varied
    local _, nl = varied:gsub("\n", "")
    lines = lines + nl
  end
end
local corpus = table.concat(parts, "\n")
local mb = #corpus / 1e6

-- One large unit: the same files replicated (kernels renamed) to 5 MB,
-- the size at which arrays outgrow the allocator's reuse (see pool.c).
local big_parts, big_size, big_copy = {}, 0, 0
while big_size < 5e6 do
  big_copy = big_copy + 1
  for _, text in ipairs(texts) do
    local varied = text:gsub("(__global__%s+void%s+)([%w_]+)", "%1%2_b" .. big_copy)
    big_parts[#big_parts + 1] = varied
    big_size = big_size + #varied + 1
  end
end
local big = table.concat(big_parts, "\n")
local big_mb = #big / 1e6

-- Seconds per run in CPU time of this process (os.clock), so that other
-- work on a shared machine counts as little as possible: the runs are split
-- into 5 batches and the table shows the best and the median batch, plus
-- the wall-clock rate of the whole measure.
local function time(fn)
  collectgarbage()
  fn() -- warm up: first-touch page faults and the allocator
  local per, reps_total, t0 = {}, 0, host.clock()
  for batch = 1, 5 do
    local reps, c0 = 0, os.clock()
    local cpu
    repeat
      fn()
      reps = reps + 1
      cpu = os.clock() - c0
    until cpu >= min_seconds / 5
    per[batch] = cpu / reps
    reps_total = reps_total + reps
  end
  local wall = (host.clock() - t0) / reps_total
  table.sort(per)
  return { best = per[1], median = per[3], wall = wall, runs = reps_total }
end

local u = source.parse(corpus, "corpus.cu")
local nfun = #u:functions()
local diags = #u:diagnostics()
local ntok, nnodes = u.ntokens, u.nnodes
u:close()

local measures = {
  { name = "parse", label = "lex+parse, one unit", fn = function()
      local unit = source.parse(corpus)
      unit:close()
    end },
  { name = "roundtrip", label = "lex+parse+print+compare (round trip)", fn = function()
      local unit = source.parse(corpus)
      assert(tostring(unit) == corpus, "round trip mismatch")
      unit:close()
    end },
  { name = "parse5mb", label = "lex+parse, one 5 MB unit", mb = big_mb, fn = function()
      local unit = source.parse(big)
      unit:close()
    end },
  { name = "files", label = "lex+parse, one unit per file", fn = function()
      for _, part in ipairs(parts) do
        local unit = source.parse(part)
        unit:close()
      end
    end },
  { name = "facts", label = "parse + constants + access patterns", fn = function()
      local unit = source.parse(corpus)
      unit:constants()
      for _, fn in ipairs(unit:functions()) do unit:access_patterns(fn) end
      unit:close()
    end },
}

if only then
  for _, m in ipairs(measures) do
    if m.name == only then
      local r = time(m.fn)
      print(string.format("%.9f %.9f %.9f %d", r.best, r.median, r.wall, r.runs))
      return 0
    end
  end
  error("unknown measure " .. only)
end

local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local results = {}
for _, m in ipairs(measures) do
  local cmd = string.format("%s run %s --measure %s %d %s", quote(host.executable()), quote(script),
    m.name, min_lines, tostring(min_seconds))
  local p = assert(io.popen(cmd))
  local out = p:read("a")
  p:close()
  local best, median, wall, runs = out:match("(%S+) (%S+) (%S+) (%d+)")
  assert(best, "measure " .. m.name .. " failed: " .. out)
  results[m.name] = { best = tonumber(best), median = tonumber(median), wall = tonumber(wall),
                      runs = tonumber(runs) }
end

print(string.format("corpus: %d files x %d copies, %d lines, %.2f MB, %d tokens, %d nodes, %d functions, %d diagnostics",
  #files, copy, lines, mb, ntok, nnodes, nfun, diags))
print("")
print(string.format("%-40s %8s %10s %10s %10s %6s", "measure", "best ms", "best MB/s",
  "median", "wall MB/s", "runs"))
for _, m in ipairs(measures) do
  local r, size = results[m.name], m.mb or mb
  print(string.format("%-40s %8.2f %10.1f %10.1f %10.1f %6d", m.label, r.best * 1e3, size / r.best,
    size / r.median, size / r.wall, r.runs))
end
print("")
print("(MB/s from CPU time: best and median of 5 batches; wall: whole measure;")
print(" each measure in its own process)")
print(string.format("5 MB unit: %d files x %d copies, %.2f MB", #files, big_copy, big_mb))
print(string.format("parse-throughput: %.1f MB/s", mb / results.parse.best))
print(string.format("parse-throughput-5mb: %.1f MB/s", big_mb / results.parse5mb.best))
print(string.format("roundtrip-throughput: %.1f MB/s", mb / results.roundtrip.best))
return 0
