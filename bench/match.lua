-- Benchmark: 100 skill-like patterns over a 10,000-line corpus of kernels,
-- with and without the literal-word prefilter; then one find each over
-- adversarial inputs (deep nesting, a long chain, garbage bytes).
--
--   klineage run bench/match.lua [LINES] [RUNS] [corpus-only]
--
-- The corpus is built deterministically from the repository's .cu files
-- (sorted by path), each copy after the first varied by renaming a few
-- identifiers and changing a few tile constants, until LINES lines (default
-- 10000); the last copy is cut at a line boundary. Each file copy is one
-- unit. Times are the median (and minimum) of RUNS runs (default 15) of matching all
-- patterns over all units (a kl.match pattern set: one walk per unit), with
-- the per-unit indexes already built; parse and index times are shown apart.
local source = require "kl.source"
local match = require "klineage.pattern.match"
local host = require "kl.host"

local target_lines = tonumber(arg and arg[1]) or 10000
local runs = tonumber(arg and arg[2]) or 15

local patterns = {
  -- loops and accumulations
  "for (int $i = 0; $i < $n; ++$i) $S",
  "for (int $i = 0; $i < $n; $i++) $S",
  "for (int $i = $a; $i < $n; $i += $s) $S",
  "for (int $k = 0; $k < $K; ++$k) $acc += $A[$ia] * $B[$ib];",
  "for (int $k = 0; $k < $K; ++$k) { $acc += $A[$ia] * $B[$ib]; }",
  "for (int $i = threadIdx.x; $i < $n; $i += blockDim.x) $S",
  "for (int $i = $X; $i < $n; $i += blockDim.x * gridDim.x) $S",
  "for (int $s = blockDim.x / 2; $s > 0; $s >>= 1) $S",
  "for (int $o = 16; $o > 0; $o /= 2) $S",
  "for (int $o = 16; $o > 0; $o >>= 1) $S",
  "for (...) { ... __syncthreads(); ... }",
  "#pragma unroll\nfor (...) $S",
  "while ($c) $S",
  "do $S while ($c);",
  "$acc += $X;",
  "$acc += $A[$i] * $B[$j];",
  "$acc = fmaf($a, $b, $acc);",
  "$acc = $acc + $X;",
  "$v = fmaxf($v, $X);",
  "$v = max($v, $X);",
  "$s += expf($X);",
  "$s += __shfl_down_sync($m, $s, $o);",
  "$v += __shfl_xor_sync($m, $v, $o);",
  "atomicAdd($p, $v)",
  "atomicAdd(&$a[$i], $v);",
  "atomicMax($...A)",
  -- index expressions
  "blockIdx.x * blockDim.x + threadIdx.x",
  "blockIdx.y * blockDim.y + threadIdx.y",
  "blockDim.x * blockIdx.x + threadIdx.x",
  "$A[$r * $ld + $c]",
  "$A[($r) * $ld + $c]",
  "$A[$i * $n + $j]",
  "$A[$i][$j]",
  "$A[$i] * $B[$j]",
  "threadIdx.x + $X",
  "$X * blockDim.x",
  "$X % 32",
  "$X / 32",
  "$X & 31",
  "$X >> 5",
  "threadIdx.x % 32",
  "threadIdx.x / 32",
  "gridDim.x * blockDim.x",
  "$A[threadIdx.x]",
  "$A[threadIdx.y][threadIdx.x]",
  -- barriers
  "__syncthreads();",
  "__syncthreads();\n...\n__syncthreads();",
  "if ($c) { ... __syncthreads(); ... }",
  "$s[$i] = $X;\n__syncthreads();",
  "__syncthreads();\n$v = $E;",
  "if ($c) __syncthreads();",
  "__syncwarp();",
  "__syncwarp($m);",
  -- shared memory
  "__shared__ $T:type $name[$N:int];",
  "__shared__ $T:type $name[$N:int][$M:int];",
  "__shared__ $T:type $name[$N][$M];",
  "extern __shared__ $T:type $name[];",
  "__shared__ float $name[$X];",
  "__shared__ $T:type $name;",
  -- vector loads, read-only cache
  "reinterpret_cast<float4*>($P)[$i]",
  "reinterpret_cast<const float4*>($P)[$i]",
  "__ldg(&$A[$i])",
  "float4 $v = $X;",
  "$v.x * $w.x",
  "make_float4($...A)",
  -- control
  "if ($i < $n) $S",
  "if ($i < $n && $j < $m) $S",
  "if (threadIdx.x == 0) $S",
  "if ($tid < $s) $S",
  "if ($c) return;",
  "$c ? $a : $b",
  "return $X;",
  -- math
  "expf($X)",
  "__expf($X)",
  "sqrtf($X)",
  "rsqrtf($X)",
  "1.0f / $X",
  "$X * $X",
  "fmaf($a, $b, $c)",
  "max($a, $b)",
  "min($a, $b)",
  "$a / sqrtf($b)",
  "logf($X)",
  "tanhf($X)",
  -- warp
  "__shfl_down_sync(0xffffffff, $v, $o)",
  "__shfl_sync($m, $v, $l)",
  "__ballot_sync($m, $p)",
  -- declarations
  "int $i = blockIdx.x * blockDim.x + threadIdx.x;",
  "const int $t = threadIdx.x;",
  "float $acc = 0.0f;",
  "int $tid = threadIdx.x;",
  "$T:type $v = $A[$i];",
  -- launches and host code
  "$k<<<$g, $b>>>($...A);",
  "$k<<<$g, $b, $s>>>($...A);",
  "dim3 $b($...A);",
  -- misc rewrites
  "$A[$i] = $X;",
  "$A[$i] += $X;",
  "$x = $x + $y;",
  "($T:type)$X",
  "static_cast<$T:type>($X)",
}
assert(#patterns == 100, "expected 100 patterns, have " .. #patterns)

-- The corpus -----------------------------------------------------------------

local function repo_root()
  local src = debug.getinfo(1, "S").source:sub(2)
  local dir = src:match("^(.*)/bench/[^/]*$")
  return dir or "."
end

local function cu_files(root)
  local list = {}
  -- build trees, hidden folders and fuzz seeds (copies) are not sources
  local p = io.popen('cd "' .. root .. '" && find . -name "*.cu" -not -path "./build*" -not -path "./.*"'
    .. ' -not -path "./tests/fuzz/*" | LC_ALL=C sort')
  for f in p:lines() do list[#list + 1] = root .. "/" .. f:gsub("^%./", "") end
  p:close()
  return list
end

local renames = {
  { "i", "idx" }, { "acc", "sum" }, { "tid", "t" }, { "row", "r" }, { "col", "c" }, { "n", "count" },
}
local constants = { { "256", "128" }, { "32", "64" }, { "16", "8" }, { "128", "512" } }

local function vary(text, k)
  if k == 0 then return text end
  local r = renames[(k - 1) % #renames + 1]
  text = text:gsub("%f[%w_]" .. r[1] .. "%f[^%w_]", r[2] .. k)
  local c = constants[(k - 1) % #constants + 1]
  text = text:gsub("%f[%w_]" .. c[1] .. "%f[^%w_]", c[2])
  -- distinct kernel names per copy
  text = text:gsub("(__global__%s+void%s+)([%w_]+)", "%1%2_v" .. k)
  return text
end

local function count_lines(s)
  local _, n = s:gsub("\n", "")
  if #s > 0 and s:sub(-1) ~= "\n" then n = n + 1 end
  return n
end

local root = repo_root()
local files = cu_files(root)
assert(#files > 0, "no .cu files under " .. root)
local texts = {}
for _, f in ipairs(files) do
  local h = assert(io.open(f, "rb"))
  texts[#texts + 1] = h:read("a")
  h:close()
end

local corpus, lines, bytes = {}, 0, 0
local copy = 0
while lines < target_lines do
  for _, t in ipairs(texts) do
    if lines >= target_lines then break end
    local v = vary(t, copy)
    local n = count_lines(v)
    if lines + n > target_lines then
      local keep, cut = target_lines - lines, 0
      for _ = 1, keep do cut = v:find("\n", cut + 1, true) end
      v = v:sub(1, cut)
      n = keep
    end
    corpus[#corpus + 1] = v
    lines = lines + n
    bytes = bytes + #v
  end
  copy = copy + 1
end

-- Patterns -------------------------------------------------------------------

local compiled = {}
for i, text in ipairs(patterns) do
  local p, msg = match.compile(text)
  if not p then error(string.format("pattern %d does not compile: %s\n%s", i, text, msg)) end
  compiled[i] = p
end

-- Timing ----------------------------------------------------------------------

local function median(t)
  table.sort(t)
  return t[(#t + 1) // 2]
end

local t0 = host.clock()
local units = {}
for i, text in ipairs(corpus) do units[i] = source.parse(text, "corpus" .. i .. ".cu") end
local parse_ms = (host.clock() - t0) * 1000

local kmatch = require "kl.match"
t0 = host.clock()
for _, u in ipairs(units) do kmatch.find_all({}, u) end -- builds and caches each unit's index
local index_ms = (host.clock() - t0) * 1000

local cpats = {}
for i, p in ipairs(compiled) do cpats[i] = p.compiled end
local set = kmatch.set(cpats) -- dispatch lists built once, for every unit

local function run_all(opts)
  local total, st = 0, { candidates = 0, steps = 0, capped = 0, prefiltered = 0, prefiltered_items = 0 }
  local t, c = host.clock(), os.clock()
  for _, u in ipairs(units) do
    local res, s = set:find_all(u, opts)
    if opts.count then
      for _, c in ipairs(res) do total = total + c end
    else
      for _, list in ipairs(res) do total = total + #list end
    end
    for k in pairs(st) do st[k] = st[k] + s[k] end
  end
  return (host.clock() - t) * 1000, total, st, (os.clock() - c) * 1000
end

-- Median and minimum wall time of `runs` runs after one warm-up. The
-- machine is shared: the minimum is the run least disturbed by others.
local function measure(opts)
  local times, cpus, total, st = {}, {}, nil, nil
  run_all(opts) -- warm-up
  local min = math.huge
  for r = 1, runs do
    local ms, n, s, cpu = run_all(opts)
    times[r], cpus[r] = ms, cpu
    if ms < min then min = ms end
    if total and total ~= n then error("match count differs between runs") end
    total, st = n, s
  end
  return median(times), total, st, min, median(cpus)
end

local with_ms, with_n, with_st, with_min, with_cpu = measure({ count = true, prefilter = true })
local without_ms, without_n, without_st, without_min, without_cpu = measure({ count = true, prefilter = false })
local tables_ms, _, _, tables_min, tables_cpu = measure({ count = false, prefilter = true })
if with_n ~= without_n then
  error(string.format("the prefilter changed the result: %d vs %d matches", with_n, without_n))
end

local function row(name, ms, min, cpu, extra)
  local function f(v) return v and string.format("%.2f ms", v) or "" end
  print(string.format("  %-34s %9.2f ms %9s %9s  %s", name, ms, f(min), f(cpu), extra or ""))
end
print(string.format("corpus: %d lines, %.0f KB, %d units from %d .cu files (%d copies); %d patterns; median of %d runs",
  lines, bytes / 1024, #units, #files, copy, #patterns, runs))
print(string.format("  %-34s %12s %9s %9s", "", "wall med", "wall min", "cpu med"))
row("parse (kl.source), once", parse_ms, nil, nil, string.format("%.1f MB/s", bytes / 1e6 / (parse_ms / 1000)))
row("match index build, once", index_ms)
row("match, prefilter (counts)", with_ms, with_min, with_cpu, string.format(
  "%d matches, %d candidates, %d steps, %d pattern-units and %d candidates skipped by the prefilter, %d capped",
  with_n, with_st.candidates, with_st.steps, with_st.prefiltered, with_st.prefiltered_items, with_st.capped))
row("match, no prefilter (counts)", without_ms, without_min, without_cpu, string.format("%d matches, %d candidates, %d steps, %d capped",
  without_n, without_st.candidates, without_st.steps, without_st.capped))
row("match, prefilter, result tables", tables_ms, tables_min, tables_cpu, "(bindings, ranges and node handles built in Lua)")

-- Adversarial inputs (issue 13): deep nesting past the parser's depth cap,
-- a long operator chain, garbage bytes. Their tails are opaque, where
-- matching is token-level; each find must stay linear (or stop at its
-- total cap and say so). One find each, after the parse.
local adversarial = {
  { "nested-ifs-200k", "$X * $Y", function()
    return "void f(int a, int b) {\n" .. string.rep("if (a) ", 200000) .. "b = a * b;\n}\n" end },
  { "chain-1M", "$X * $Y", function() return "void f(int a) {\n  int x = a" .. string.rep("*a", 999999) .. ";\n}\n" end },
  { "ff-64k", "$X * $Y", function() return string.rep("\xff", 65536) end },
  { "nested-ifs-200k-stmt", "if ($c) $S", function()
    return "void f(int a, int b) {\n" .. string.rep("if (a) ", 200000) .. "b = a * b;\n}\n" end },
}
print("")
print(string.format("  %-24s %-12s %10s %9s %10s %12s %7s %8s", "adversarial input", "pattern", "bytes", "find", "matches",
  "steps", "capped", "stopped"))
local adv_ms = {}
if arg and arg[3] == "corpus-only" then adversarial = {} end -- e.g. to time an engine without the caps
for i, case in ipairs(adversarial) do
  local text = case[3]()
  local u = source.parse(text, case[1] .. ".cu")
  local p = assert(match.compile(case[2]))
  local t = host.clock()
  local counts, st = match.find_all({ p }, u, { count = true }) -- the matcher's work, not Lua tables
  adv_ms[i] = (host.clock() - t) * 1000
  print(string.format("  %-24s %-12s %10d %6.1f ms %10d %12d %7d %8s", case[1], case[2], #text, adv_ms[i], counts[1],
    st.steps, st.capped, tostring(st.stopped)))
end

print(string.format("load average: %s", (io.open("/proc/loadavg") or { read = function() return "?" end }):read("l") or "?"))
print(string.format("match-100x10k: %.2f ms", with_ms))
print(string.format("match-100x10k-noprefilter: %.2f ms", without_ms))
for i, case in ipairs(adversarial) do
  print(string.format("match-%s: %.1f ms", case[1], adv_ms[i]))
end
