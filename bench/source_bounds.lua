-- Benchmark of kl.source on inputs built to hit superlinear paths: a 5 MB
-- unit, 1 MB of garbage and of 0xFF bytes (with the size of the
-- diagnostics they make), access patterns of a kernel of 40k statements,
-- 200k nested ifs, a 1M-term chain, 100k chained #defines, 512k unclosed
-- ( then 512k ], 2000 wide subscripts 400 loops deep and a kernel with 20k
-- parameters.
--
--   klineage run bench/source_bounds.lua [REPS]
--
-- Prints a table (CPU time of the timed step, best of REPS runs, default
-- 3; sizes where they apply), then one `figure: value unit` line per case.
-- Each case runs in a fresh klineage process (`--measure NAME`), as in
-- bench/parse.lua. A benchmark, not a test: tests/lua/source_bounds_spec.lua
-- asserts the behaviour (bounded counts, identical results).
local source = require "kl.source"
local host = require "kl.host"

local only
if arg[1] == "--measure" then
  only = arg[2]
  table.remove(arg, 1)
  table.remove(arg, 1)
end
local reps = tonumber(arg[1]) or 3
local script = arg[0] or "bench/source_bounds.lua"
local root = script:match("^(.*)/bench/[^/]*$") or "."

-- deterministic bytes: a linear congruential generator
local function random_bytes(n, seed)
  local t, x = {}, seed
  for i = 1, n do
    x = (x * 1103515245 + 12345) % 2147483648
    t[i] = string.char((x >> 16) & 255)
  end
  return table.concat(t)
end

local function repo_kernels()
  local parts = {}
  for _, e in ipairs(require("klineage.base.files").walk({ root .. "/gpu" }, { ".cu" })) do
    if e.size then -- a regular file (not a note or a skip)
      local h = assert(io.open(e.path, "rb"))
      parts[#parts + 1] = h:read("a")
      h:close()
    end
  end
  return table.concat(parts, "\n")
end

-- the repository's kernels, replicated with renamed kernels up to 5 MB
local function unit_5mb()
  local base, parts, size, i = repo_kernels(), {}, 0, 0
  while size < 5e6 do
    i = i + 1
    local s = base:gsub("__global__ void (%w+)", "__global__ void %1_r" .. i)
    parts[#parts + 1] = s
    size = size + #s + 1
  end
  return table.concat(parts, "\n")
end

-- one kernel of n statements: declarations, accesses, accumulations
local function statements(n)
  local t = { "__global__ void k(const float *a, float *out, int n) {\n",
              "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  float acc = 0.0f;\n" }
  for k = 1, n // 2 do
    t[#t + 1] = string.format("  float v%d = a[i + %d];\n  acc += v%d * out[i * n + %d];\n",
                              k, k, k, k)
  end
  t[#t + 1] = "  out[i] = acc;\n}\n"
  return table.concat(t)
end

local function nested_ifs(n)
  return "__global__ void k(float *a, int x) {\n  int i = threadIdx.x;\n" ..
         string.rep("if (x) ", n) .. "a[i] = 0;\n}\n"
end

local function chain(n)
  return "__global__ void k(float *a, int x) {\n  int i = threadIdx.x;\n  a[" ..
         string.rep("x + ", n - 1) .. "i] = 0;\n}\n"
end

local function defines(n)
  local t = { "#define D0 1\n" }
  -- each body names the first one too: a lookup that scans back to it
  -- is quadratic
  for k = 1, n - 1 do t[#t + 1] = string.format("#define D%d (D%d + D0)\n", k, k - 1) end
  t[#t + 1] = "__global__ void k(float *a) { a[threadIdx.x * D" .. (n - 1) .. "] = 0; }\n"
  return table.concat(t)
end

-- d nested loops, then s subscripts of t loop variables each
local function deep_loops(d, s, t)
  local parts = { "__global__ void k(float *a, int n) {\n" }
  for k = 1, d do parts[#parts + 1] = string.format("for (int j%d = 0; j%d < n; j%d++) {\n", k, k, k) end
  local terms = {}
  for k = 1, t do terms[#terms + 1] = "j" .. (k % d + 1) end
  local stmt = "a[" .. table.concat(terms, " + ") .. "] = 0;\n"
  for _ = 1, s do parts[#parts + 1] = stmt end
  parts[#parts + 1] = string.rep("}", d) .. "}\n"
  return table.concat(parts)
end

local function many_params(n)
  local ps, uses = {}, {}
  for k = 1, n do
    ps[#ps + 1] = "float *p" .. k
    uses[#uses + 1] = string.format("  p%d[threadIdx.x] = 0;\n", k)
  end
  return "__global__ void k(" .. table.concat(ps, ", ") .. ") {\n" .. table.concat(uses) .. "}\n"
end

local function first_function(u)
  return u:functions()[1]
end

local function diag_bytes(diags)
  local bytes = 0
  for _, d in ipairs(diags) do bytes = bytes + #d.id + #d.message + #d.text end
  return bytes
end

-- Each case: label, the input, and the timed step, which returns a
-- table of sizes for the table's last column.
local cases = {
  { name = "parse_5mb", label = "parse one 5 MB unit", input = unit_5mb, rate = true,
    run = function(text)
      local u, d = source.parse(text)
      u:close()
      return { diags = #d }
    end },
  { name = "garbage_1mb", label = "parse 1 MB of random bytes", input = function()
      return random_bytes(1 << 20, 7)
    end, run = function(text)
      local u, d = source.parse(text)
      u:close()
      return { diags = #d, diag_bytes = diag_bytes(d) }
    end },
  { name = "ff_1mb", label = "parse 1 MB of 0xFF", input = function()
      return string.rep("\xff", 1 << 20)
    end, run = function(text)
      local u, d = source.parse(text)
      u:close()
      return { diags = #d, diag_bytes = diag_bytes(d) }
    end },
  { name = "access_40k", label = "access_patterns, 40k statements", input = function()
      return statements(40000)
    end, prepare = source.parse, run = function(u)
      local n = 0
      for _, p in pairs(u:access_patterns(first_function(u))) do n = n + #p.accesses end
      return { accesses = n }
    end },
  { name = "ifs_200k_parse", label = "parse 200k nested ifs", input = function()
      return nested_ifs(200000)
    end, run = function(text)
      local u, d = source.parse(text)
      u:close()
      return { diags = #d }
    end },
  { name = "ifs_200k_access", label = "access_patterns, 200k nested ifs", input = function()
      return nested_ifs(200000)
    end, prepare = source.parse, run = function(u)
      local n = 0
      for _, p in pairs(u:access_patterns(first_function(u))) do n = n + #p.accesses end
      return { accesses = n }
    end },
  { name = "chain_1m_parse", label = "parse a 1M-term chain", input = function()
      return chain(1000000)
    end, run = function(text)
      local u, d = source.parse(text)
      u:close()
      return { diags = #d }
    end },
  { name = "chain_1m_affine", label = "access_patterns + affine, 1M-term chain", input = function()
      return chain(1000000)
    end, prepare = source.parse, run = function(u)
      local fn = first_function(u)
      local n = 0
      for _, p in pairs(u:access_patterns(fn)) do n = n + #p.accesses end
      for node in u:walk("index") do node:field("index"):affine(fn) end
      return { accesses = n }
    end },
  { name = "defines_100k", label = "constants, 100k chained #defines", input = function()
      return defines(100000)
    end, prepare = source.parse, run = function(u)
      local cs = u:constants()
      local n = 0
      for _ in pairs(cs) do n = n + 1 end
      return { constants = n }
    end },
  { name = "brackets_1mb", label = "parse 512k ( then 512k ]", input = function()
      return string.rep("(", 1 << 19) .. string.rep("]", 1 << 19)
    end, run = function(text)
      local u, d = source.parse(text)
      u:close()
      return { diags = #d }
    end },
  { name = "deep_loops", label = "access_patterns, 400 loops deep", input = function()
      return deep_loops(400, 2000, 200)
    end, prepare = source.parse, run = function(u)
      local n = 0
      for _, p in pairs(u:access_patterns(first_function(u))) do n = n + #p.accesses end
      return { accesses = n }
    end },
  { name = "params_20k", label = "access_patterns, 20k parameters", input = function()
      return many_params(20000)
    end, prepare = source.parse, run = function(u)
      local n = 0
      for _, p in pairs(u:access_patterns(first_function(u))) do n = n + #p.accesses end
      return { accesses = n }
    end },
}

local function format_sizes(sizes)
  local keys = {}
  for k in pairs(sizes) do keys[#keys + 1] = k end
  table.sort(keys)
  local out = {}
  for _, k in ipairs(keys) do out[#out + 1] = k .. "=" .. tostring(sizes[k]) end
  return table.concat(out, " ")
end

if only then
  for _, c in ipairs(cases) do
    if c.name == only then
      local text = c.input()
      local best, sizes = math.huge, nil
      for _ = 1, reps do
        collectgarbage()
        local arg_ = c.prepare and c.prepare(text) or text
        local t0 = os.clock()
        sizes = c.run(arg_)
        local dt = os.clock() - t0
        if c.prepare then arg_:close() end
        if dt < best then best = dt end
      end
      print(string.format("%.9f %d %s", best, #text, format_sizes(sizes)))
      return 0
    end
  end
  error("unknown measure " .. only)
end

local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
print(string.format("%-42s %10s %10s %10s  %s", "case", "input MB", "best ms", "MB/s", "sizes"))
local figures = {}
for _, c in ipairs(cases) do
  local cmd = string.format("%s run %s --measure %s %d", quote(host.executable()), quote(script),
    c.name, reps)
  local p = assert(io.popen(cmd))
  local out = p:read("a")
  p:close()
  local best, len, sizes = out:match("(%S+) (%d+) ?([^\n]*)")
  assert(best, "measure " .. c.name .. " failed: " .. out)
  best, len = tonumber(best), tonumber(len)
  print(string.format("%-42s %10.2f %10.2f %10.1f  %s", c.label, len / 1e6, best * 1e3,
    len / 1e6 / best, sizes))
  figures[#figures + 1] = { c, best, len, sizes }
end
print("")
print("(CPU time of the timed step, best of " .. reps .. " runs, each case in its own process)")
for _, f in ipairs(figures) do
  local c, best, len, sizes = f[1], f[2], f[3], f[4]
  local name = (c.name:gsub("_", "-"))
  if c.rate then print(string.format("%s-throughput: %.1f MB/s", name, len / 1e6 / best)) end
  print(string.format("%s-time: %.2f ms", name, best * 1e3))
  for k, v in sizes:gmatch("([%w_]+)=(%d+)") do
    print(string.format("%s-%s: %s %s", name, (k:gsub("_", "-")), v,
      k:match("bytes$") and "bytes" or "count"))
  end
end
return 0
