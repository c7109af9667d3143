-- bench/emu.lua: how fast kl.emu runs CUDA C on the CPU.
--
--   klineage run bench/emu.lua [--lineages] [--order=forward|reverse|shuffle]
--
-- Prints a table of: raw fiber switches per second (the assembly switch and
-- glibc's swapcontext), switches per second driven by __syncthreads in a
-- kernel, the emulated time of a naive and a shared-memory tiled sgemm at
-- 256 x 256 x 256 (written here), and of every version of the sgemm lineage
-- in gpu/workloads/sgemm at the same size, checked against its v0.
-- --lineages also runs every version of every workload under gpu/workloads
-- at its test sizes, on the engine's generated inputs, and compares its
-- outputs with the workload's v0 on emu under the workload's tolerance;
-- --order runs the threads of each block in that order (reverse and
-- shuffle expose a missing barrier that forward order hides).
-- The line before the last three times the most optimized (last) sgemm
-- version that runs correctly;
-- the last three lines are machine-readable:
--   fiber-switches: N /s
--   emu-sgemm-naive-256: N s
--   emu-sgemm-tiled-256: N s
local emu = require "klineage.device.emu"
local kemu = require "kl.emu"
local host = require "kl.host"

local args = { ... }
local want_lineages, order = false, "forward"
for _, a in ipairs(args) do
  if a == "--lineages" then want_lineages = true end
  order = a:match("^%-%-order=(%a+)$") or order
end

local home = os.getenv("KLINEAGE_HOME")
if not home or home == "" then
  home = host.executable():match("^(.*)/[^/]*/[^/]*$") .. "/share/klineage"
end

local rows = {}
local function row(what, value, unit, note)
  rows[#rows + 1] = { what, value, unit, note or "" }
  io.stderr:write(string.format("  %-44s %14s %-4s %s\n", what, value, unit, note or ""))
end

local function median(t)
  table.sort(t)
  return t[(#t + 1) // 2]
end

local function timed(n, fn)
  local ts = {}
  for i = 1, n do
    local t0 = host.clock()
    fn()
    ts[i] = host.clock() - t0
  end
  return median(ts)
end

local function lcg(seed)
  local s = seed
  return function()
    s = (s * 6364136223846793005 + 1442695040888963407) & 0x7FFFFFFFFFFFFFFF
    return (s >> 33) / (1 << 30) - 1.0
  end
end

local function uniform_floats(n, seed)
  local r, parts = lcg(seed), {}
  for i = 1, n, 4096 do
    local chunk = {}
    for j = 1, math.min(4096, n - i + 1) do chunk[j] = r() end
    parts[#parts + 1] = string.pack(string.rep("f", #chunk), table.unpack(chunk))
  end
  return table.concat(parts)
end

-- Largest relative difference between two float buffers' contents.
local function max_diff(a, b)
  local n, worst, scale = #a // 4, 0, 0
  for i = 0, n - 1 do
    local x = string.unpack("f", a, 4 * i + 1)
    local y = string.unpack("f", b, 4 * i + 1)
    if x ~= x or y ~= y then
      if not (x ~= x and y ~= y) then return math.huge end
    else
      worst = math.max(worst, math.abs(x - y))
      scale = math.max(scale, math.abs(y))
    end
  end
  return worst / math.max(scale, 1e-30)
end

-- --- fibers -------------------------------------------------------------------------

local asm_rate = kemu.fiber_benchmark(256, 20000, "asm")
local uc_rate = kemu.fiber_benchmark(256, 2000, "ucontext")
row("fiber switches, assembly (256 fibers)", string.format("%.3g", asm_rate), "/s")
row("fiber switches, swapcontext (256 fibers)", string.format("%.3g", uc_rate), "/s")

local barrier_src = [[
extern "C" __global__ void barriers(int rounds, float *out) {
  __shared__ float s[1024];
  float v = threadIdx.x;
  for (int r = 0; r < rounds; ++r) {
    s[threadIdx.x] = v;
    __syncthreads();
    v = s[(threadIdx.x + 1) % blockDim.x];
    __syncthreads();
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
]]
local bm = assert(emu.compile(barrier_src, { name = "barriers.cu" }))
local bout <close> = emu.alloc(4 * 8 * 256, "out", 4)
local switches = 0
local t_bar = timed(3, function()
  local ok, info = bm:launch("barriers", { grid = 8, block = 256, args = { 1000, bout } })
  assert(ok, info and info.message)
  switches = info.switches
end)
local barrier_rate = switches / t_bar
row("switches through __syncthreads (8x256, 2000 barriers)", string.format("%.3g", barrier_rate), "/s",
  string.format("%d host threads", host.cpu_count()))

-- --- sgemm 256^3 ------------------------------------------------------------------------

local S = 256
local sgemm_src = [[
// One thread per element of C.
extern "C" __global__ void sgemm_naive(int M, int N, int K, const float *A, const float *B, float *C) {
  int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
  }
}
#define T 16
// 16 x 16 tiles of A and B staged in shared memory; M, N, K multiples of 16.
extern "C" __global__ void sgemm_tiled(int M, int N, int K, const float *A, const float *B, float *C) {
  __shared__ float As[T][T], Bs[T][T];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += T) {
    As[ty][tx] = A[row * K + k0 + tx];
    Bs[ty][tx] = B[(k0 + ty) * N + col];
    __syncthreads();
    for (int k = 0; k < T; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  C[row * N + col] = acc;
}
]]
local t0 = host.clock()
local sm = assert(emu.compile(sgemm_src, { name = "bench_sgemm.cu" }))
row("compile bench sgemm (or cache hit)", string.format("%.3f", host.clock() - t0), "s", sm.compiled and "compiled" or "cached")
local A <close> = emu.alloc(4 * S * S, "A", 4)
local B <close> = emu.alloc(4 * S * S, "B", 4)
local C <close> = emu.alloc(4 * S * S, "C", 4)
A:upload(uniform_floats(S * S, 1))
B:upload(uniform_floats(S * S, 2))
local function run_sgemm(kernel)
  local out
  local t = timed(3, function()
    local ok, info = sm:launch(kernel, { grid = { S // 16, S // 16 }, block = { 16, 16 }, args = { S, S, S, A, B, C } })
    assert(ok, info and info.message)
    out = C:download()
  end)
  return t, out
end
local t_naive, c_naive = run_sgemm("sgemm_naive")
local t_tiled, c_tiled = run_sgemm("sgemm_tiled")
row("sgemm naive 256^3 (bench source)", string.format("%.4f", t_naive), "s",
  string.format("%.2f GFLOP/s emulated", 2 * S ^ 3 / t_naive / 1e9))
row("sgemm tiled 256^3 (bench source)", string.format("%.4f", t_tiled), "s",
  string.format("max rel diff vs naive %.1e", max_diff(c_tiled, c_naive)))

-- --- lineages ----------------------------------------------------------------------------

local ann = require "klineage.workload.annotations"
local workload = require "klineage.workload"
local randgen = require "kl.randgen"

-- Runs one lineage version at params p on the given input bytes (outputs
-- without an init start poisoned, as in the gate). Returns seconds and
-- { output name -> bytes }, or nil and the reason.
local function run_version(w, file, p, inputs)
  local path = w.dir .. "/" .. file
  local mod, err = emu.compile_file(path)
  if not mod then return nil, err.verdict .. ": " .. err.message end
  local src = assert(require("klineage.base.files").read_text(path))
  local a, aerr = ann.parse(src, file)
  if not a then return nil, aerr end
  local consts = ann.constants(src)
  local counts = assert(workload.counts(w, p))
  local bufs = {}
  for _, b in ipairs(w.buffer_list) do
    local size = randgen.size(b.type)
    local buf = emu.alloc(size * counts[b.name], b.name, size)
    if b.init ~= nil then buf:upload(inputs[b.name]) else buf:fill(0xFF) end
    bufs[b.name] = buf
  end
  local function launch(bind)
    bind = bind or {}
    local envs, eerr = ann.environment(p, consts, bind)
    if not envs then error(eerr, 0) end
    local ok, why = ann.check(a, envs)
    if not ok then error({ skip = why }, 0) end
    local g, gerr = ann.geometry(a, envs, bind.kernel)
    if not g then error(gerr, 0) end
    local kargs = {}
    for i, name in ipairs(w.args) do
      local v = bind[name]
      if type(v) == "string" then v = bufs[v] end
      if v == nil then v = bufs[name] or p[name] end
      kargs[i] = v
    end
    local lok, info = mod:launch(bind.kernel or w.kernel, { grid = g.grid, block = g.block, smem = g.smem,
      args = kargs, order = order, seed = 1 })
    if not lok then error(info.verdict .. ": " .. info.message, 0) end
  end
  local ctx = {
    launch = function(_, bind) launch(bind) end,
    zero = function(_, name) bufs[name]:fill(0) end,
    read = function(_, name, i)
      local b = w.buffer_by_name[name]
      local size = randgen.size(b.type)
      return randgen.get(b.type, bufs[name]:download(size * i, size), 1)
    end,
  }
  local t0c = host.clock()
  local ok, e = pcall(function()
    if w.run then w.run(ctx, p) else launch({}) end
  end)
  local t = host.clock() - t0c
  local outs = {}
  for _, b in ipairs(w.buffer_list) do
    if b.output then outs[b.name] = bufs[b.name]:download() end
    bufs[b.name]:free()
  end
  if not ok then
    if type(e) == "table" and e.skip then return nil, "skipped: " .. e.skip end
    return nil, tostring(e)
  end
  return t, outs
end

-- The worst output of a version against the reference's, under the
-- workload's tolerance: "ok" or "MISMATCH", and a note.
local function judge(w, outs, ref)
  local worst, pass = 0, true
  for name, bytes in pairs(outs) do
    local b = w.buffer_by_name[name]
    local c = randgen.compare(b.type, bytes, ref[name], workload.tolerance(w, name))
    pass = pass and c.pass
    worst = math.max(worst, c.max_rel or 0)
  end
  return string.format("max rel diff vs v0 %.1e%s", worst, pass and "" or "  MISMATCH")
end

-- Runs every version of w at params p on the same inputs, the first that
-- runs being the reference, and adds a row for each (label_of(i, file)).
-- Returns the last version that matched the reference and its time.
local function run_lineage(w, p, inputs, label_of)
  local ref, last_name, last_time
  for i, file in ipairs(w.lineage) do
    local t, outs = run_version(w, file, p, inputs)
    local label = label_of(i, file)
    if not t then
      row(label, "-", "", outs)
    elseif not ref then
      ref = outs
      row(label, string.format("%.4f", t), "s", "the reference")
    else
      local note = judge(w, outs, ref)
      if not note:find("MISMATCH", 1, true) then last_name, last_time = file, t end
      row(label, string.format("%.4f", t), "s", note)
    end
  end
  return last_name, last_time
end

local sg = workload.load("sgemm")
local best_name, best_time
if sg then
  local p = {}
  for k, v in pairs(sg.params) do p[k] = v end
  p.M, p.N, p.K = S, S, S
  best_name, best_time = run_lineage(sg, p, assert(workload.host_inputs(sg, p, 100)), function(i, file)
    return i == 1 and "emu sgemm v0 256^3: " .. file or "sgemm lineage " .. file .. " 256^3"
  end)
end

if want_lineages then
  local names = {}
  local ls = io.popen("ls '" .. home .. "/gpu/workloads'")
  for name in ls:lines() do names[#names + 1] = name end
  ls:close()
  for _, wname in ipairs(names) do
    local wl = workload.load(wname)
    if wl then
      for _, size in ipairs(workload.sizes(wl)) do
        if not size.bench then
          run_lineage(wl, size.params, assert(workload.host_inputs(wl, size.params, 7)), function(_, file)
            return string.format("%s %s %s", wname, size.label, file)
          end)
        end
      end
    end
  end
end

print(string.format("%-56s %14s %-4s %s", "what", "value", "unit", "note"))
for _, r in ipairs(rows) do print(string.format("%-56s %14s %-4s %s", r[1], r[2], r[3], r[4])) end
if best_name then print(string.format("emu-sgemm-lineage-best-256: %.4f s (%s)", best_time, best_name)) end
print(string.format("fiber-switches: %.0f /s", asm_rate))
print(string.format("emu-sgemm-naive-256: %.4f s", t_naive))
print(string.format("emu-sgemm-tiled-256: %.4f s", t_tiled))
return 0
