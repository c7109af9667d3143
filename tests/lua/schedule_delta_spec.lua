-- Schedule signatures (klineage.facts.schedule) of small kernels written
-- here, each kind of schedule delta (klineage.search.schedule_delta) on a
-- written pair, the reasons an unexplained step gives, kir's reproduction
-- where the older version lifts, the share over the seven lineages, and
-- the command `klineage deltas`.
local schedule = require "klineage.facts.schedule"
local delta = require "klineage.search.schedule_delta"
local cjson = require "cjson"

local function sig(text, params)
  local s, why = schedule.signature(text, nil, { params = params })
  if not s then fail("no signature: %s", tostring(why)) end
  return s.features
end

local function step(older, newer, opts)
  return delta.step(older, newer, opts or { kir = false })
end

local function explained_as(d, text)
  check(d.explained, "not explained: %s", table.concat(d.unexplained or {}, "; "))
  expect(d.text):equals(text)
end

local function refused(d, pattern)
  expect(d.explained):equals(false)
  local all = table.concat(d.unexplained, "\n")
  check(all:find(pattern) ~= nil, "no reason matching '%s' in:\n%s", pattern, all)
end

-- ---- kernels -----------------------------------------------------------------------

local ROWS = [=[
// @kl launch grid(cdiv(H, 16), cdiv(W, 16)) block(16, 16)
extern "C" __global__ void scale(int H, int W, const float *src, float *dst) {
  int y = blockIdx.x * 16 + threadIdx.x;
  int x = blockIdx.y * 16 + threadIdx.y;
  if (y < H && x < W) dst[y * W + x] = 2.0f * src[y * W + x];
}
]=]

local COLS = [=[
// @kl launch grid(cdiv(W, 16), cdiv(H, 16)) block(16, 16)
extern "C" __global__ void scale(int H, int W, const float *src, float *dst) {
  int x = blockIdx.x * 16 + threadIdx.x;
  int y = blockIdx.y * 16 + threadIdx.y;
  if (y < H && x < W) dst[y * W + x] = 2.0f * src[y * W + x];
}
]=]

-- COLS again, every name and the layout changed
local COLS_RENAMED = [=[
// @kl launch grid(cdiv(width, 16), cdiv(height, 16)) block(16, 16)
extern "C" __global__ void scale(int height, int width, const float *src, float *dst)
{
  const int column = threadIdx.x + 16 * blockIdx.x;
  const int row    = threadIdx.y + 16 * blockIdx.y;
  if (!(row < height) || !(column < width)) return;
  const long at = (long)row * width + column;
  dst[at] = src[at] * 2.0f;
}
]=]

local MM = [=[
#define T 16
// @kl launch grid(cdiv(n, T), cdiv(n, T)) block(T, T)
extern "C" __global__ void mm(int n, const float *p, const float *q, float *r) {
  int i = blockIdx.y * T + threadIdx.y, j = blockIdx.x * T + threadIdx.x;
  if (i >= n || j >= n) return;
  float s = 0.0f;
  for (int k = 0; k < n; ++k) s += p[i * n + k] * q[k * n + j];
  r[i * n + j] = s;
}
]=]

local MM_FMA = MM:gsub("s %+= p%[i %* n %+ k%] %* q%[k %* n %+ j%];", "s = fmaf(p[i * n + k], q[k * n + j], s);")

local MM_TILED = [=[
#define T 16
// @kl launch grid(cdiv(n, T), cdiv(n, T)) block(T, T)
extern "C" __global__ void mm(int n, const float *p, const float *q, float *r) {
  __shared__ float tp[T][T], tq[T][T];
  int i = blockIdx.y * T + threadIdx.y, j = blockIdx.x * T + threadIdx.x;
  float s = 0.0f;
  for (int k0 = 0; k0 < n; k0 += T) {
    tp[threadIdx.y][threadIdx.x] = i < n && k0 + threadIdx.x < n ? p[i * n + k0 + threadIdx.x] : 0.0f;
    tq[threadIdx.y][threadIdx.x] = j < n && k0 + threadIdx.y < n ? q[(k0 + threadIdx.y) * n + j] : 0.0f;
    __syncthreads();
    for (int k = 0; k < T; ++k) s += tp[threadIdx.y][k] * tq[k][threadIdx.x];
    __syncthreads();
  }
  if (i < n && j < n) r[i * n + j] = s;
}
]=]

local MM_DOUBLE = [=[
#define T 16
// @kl launch grid(cdiv(n, T), cdiv(n, T)) block(T, T)
// @kl requires n % T == 0
extern "C" __global__ void mm(int n, const float *p, const float *q, float *r) {
  __shared__ float tp[2][T][T], tq[2][T][T];
  int i = blockIdx.y * T + threadIdx.y, j = blockIdx.x * T + threadIdx.x;
  float s = 0.0f;
  tp[0][threadIdx.y][threadIdx.x] = p[i * n + threadIdx.x];
  tq[0][threadIdx.y][threadIdx.x] = q[threadIdx.y * n + j];
  __syncthreads();
  int cur = 0;
  for (int k0 = 0; k0 < n; k0 += T) {
    if (k0 + T < n) {
      tp[cur ^ 1][threadIdx.y][threadIdx.x] = p[i * n + k0 + T + threadIdx.x];
      tq[cur ^ 1][threadIdx.y][threadIdx.x] = q[(k0 + T + threadIdx.y) * n + j];
    }
    for (int k = 0; k < T; ++k) s += tp[cur][threadIdx.y][k] * tq[cur][k][threadIdx.x];
    __syncthreads();
    cur ^= 1;
  }
  r[i * n + j] = s;
}
]=]

local MM_RTILE = [=[
#define T 16
#define R 4
// @kl launch grid(cdiv(n, T), cdiv(n, T)) block(T, cdiv(T, R))
// @kl requires n % T == 0
extern "C" __global__ void mm(int n, const float *p, const float *q, float *r) {
  int i0 = blockIdx.y * T + threadIdx.y * R, j = blockIdx.x * T + threadIdx.x;
  float acc[R];
  for (int u = 0; u < R; ++u) acc[u] = 0.0f;
  for (int k = 0; k < n; ++k) {
    float b = q[k * n + j];
    for (int u = 0; u < R; ++u) acc[u] += p[(i0 + u) * n + k] * b;
  }
  for (int u = 0; u < R; ++u) r[(i0 + u) * n + j] = acc[u];
}
]=]

local COPY = [=[
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void copy(int n, const float *a, float *b) {
  int t = blockIdx.x * 256 + threadIdx.x;
  if (t < n) b[t] = a[t];
}
]=]

local COPY4 = [=[
// @kl launch grid(cdiv(n, 1024)) block(256)
// @kl requires n % 4 == 0
extern "C" __global__ void copy(int n, const float *a, float *b) {
  int t = blockIdx.x * 256 + threadIdx.x;
  if (t < n / 4) reinterpret_cast<float4 *>(b)[t] = reinterpret_cast<const float4 *>(a)[t];
}
]=]

local COPY_COARSE = [=[
// @kl launch grid(cdiv(n, 1024)) block(256)
extern "C" __global__ void copy(int n, const float *a, float *b) {
  for (int u = 0; u < 4; ++u) {
    int t = blockIdx.x * 1024 + u * 256 + threadIdx.x;
    if (t < n) b[t] = a[t];
  }
}
]=]

local COPY_PERSISTENT = [=[
// @kl launch grid(264) block(256)
extern "C" __global__ void copy(int n, const float *a, float *b) {
  for (int t = blockIdx.x * 256 + threadIdx.x; t < n; t += gridDim.x * 256) b[t] = a[t];
}
]=]

-- per-block partial sums: a block of 256 threads sums 256 elements, then a
-- fixed grid whose threads each sum many (as many partials as blocks)
local BLOCKSUM = [=[
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void blocksum(int n, const float *x, float *partial) {
  __shared__ float s[256];
  int t = blockIdx.x * 256 + threadIdx.x;
  s[threadIdx.x] = t < n ? x[t] : 0.0f;
  __syncthreads();
  for (int k = 128; k > 0; k >>= 1) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}
]=]

local BLOCKSUM_GRID = [=[
// @kl launch grid(264) block(256)
extern "C" __global__ void blocksum(int n, const float *x, float *partial) {
  __shared__ float s[256];
  float v = 0.0f;
  for (int t = blockIdx.x * 256 + threadIdx.x; t < n; t += gridDim.x * 256) v += x[t];
  s[threadIdx.x] = v;
  __syncthreads();
  for (int k = 128; k > 0; k >>= 1) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}
]=]

-- the same grid-strided sum with no block tree: each thread's partial to an atomic
local ATOMICSUM = [=[
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void atomicsum(int n, const float *x, float *out) {
  int t = blockIdx.x * 256 + threadIdx.x;
  if (t < n) atomicAdd(out, x[t]);
}
]=]

local ATOMICSUM_GRID = [=[
// @kl launch grid(264) block(256)
extern "C" __global__ void atomicsum(int n, const float *x, float *out) {
  float v = 0.0f;
  for (int t = blockIdx.x * 256 + threadIdx.x; t < n; t += gridDim.x * 256) v += x[t];
  atomicAdd(out, v);
}
]=]

local ROWSUM = [=[
// @kl launch grid(cdiv(rows, 128)) block(128)
extern "C" __global__ void rowsum(int rows, int cols, const float *m, float *out) {
  int r = blockIdx.x * 128 + threadIdx.x;
  if (r >= rows) return;
  float s = 0.0f;
  for (int c = 0; c < cols; ++c) s += m[r * cols + c];
  out[r] = s;
}
]=]

local ROWSUM_WARP = [=[
// @kl launch grid(cdiv(rows, 4)) block(128)
extern "C" __global__ void rowsum(int rows, int cols, const float *m, float *out) {
  int r = blockIdx.x * 4 + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (r >= rows) return;
  float s = 0.0f;
  for (int c = lane; c < cols; c += 32) s += m[r * cols + c];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if (lane == 0) out[r] = s;
}
]=]

-- a device function does the combining: it is read through its call
local ROWSUM_BLOCK = [=[
// @kl launch grid(rows) block(128)
__device__ float tree(float v, float *buf) {
  buf[threadIdx.x] = v;
  __syncthreads();
  for (int h = 64; h > 0; h >>= 1) {
    if (threadIdx.x < h) buf[threadIdx.x] += buf[threadIdx.x + h];
    __syncthreads();
  }
  return buf[0];
}
extern "C" __global__ void rowsum(int rows, int cols, const float *m, float *out) {
  __shared__ float buf[128];
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += 128) s += m[blockIdx.x * cols + c];
  s = tree(s, buf);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}
]=]

local DOT8 = [=[
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void dot8(int n, const float *w, const float *x, float *y) {
  int i = blockIdx.x * 256 + threadIdx.x;
  if (i >= n) return;
  float s = 0.0f;
  for (int t = 0; t < 8; ++t) s += w[t] * x[i * 8 + t];
  y[i] = s;
}
]=]
local DOT8_UNROLLED = DOT8:gsub("  for %(int t", "#pragma unroll\n  for (int t")

local HIST = [=[
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void hist(int n, const unsigned char *v, unsigned *h) {
  int t = blockIdx.x * 256 + threadIdx.x;
  if (t < n) atomicAdd(&h[v[t]], 1u);
}
]=]

local HIST_PRIVATE = [=[
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void hist(int n, const unsigned char *v, unsigned *h) {
  __shared__ unsigned bins[256];
  bins[threadIdx.x] = 0;
  __syncthreads();
  int t = blockIdx.x * 256 + threadIdx.x;
  if (t < n) atomicAdd(&bins[v[t]], 1u);
  __syncthreads();
  atomicAdd(&h[threadIdx.x], bins[threadIdx.x]);
}
]=]

local SCAN = [=[
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void incl(int n, const int *x, int *y) {
  __shared__ int sums[8];
  int t = blockIdx.x * 256 + threadIdx.x, lane = threadIdx.x % 32;
  int v = t < n ? x[t] : 0;
  for (int o = 1; o < 32; o <<= 1) {
    int u = __shfl_up_sync(0xffffffffu, v, o);
    if (lane >= o) v += u;
  }
  if (lane == 31) sums[threadIdx.x / 32] = v;
  __syncthreads();
  for (int w = 0; w < threadIdx.x / 32; ++w) v += sums[w];
  if (t < n) y[t] = v;
}
]=]

local VOTE = [=[
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void count_pos(int n, const float *x, int *total) {
  int t = blockIdx.x * 256 + threadIdx.x;
  unsigned m = __ballot_sync(0xffffffffu, t < n && x[t] > 0.0f);
  if (threadIdx.x % 32 == 0) atomicAdd(&total[0], __popc(m));
}
]=]

-- ---- signatures ----------------------------------------------------------------

describe("the schedule signature", function()
  it("reads how a warp's accesses fall on memory, from the lanes, not the names", function()
    local rows, cols = sig(ROWS), sig(COLS)
    expect(rows["global.dst.store"]):equals("strided")
    expect(rows["global.src.load"]):equals("strided")
    expect(cols["global.dst.store"]):equals("coalesced")
    expect(cols["block"]):equals("16x16")
    expect(cols["grid.dims"]):equals(2)
    expect(sig(COLS_RENAMED)):equals(cols)
    local mm = sig(MM)
    expect(mm["global.p.load"]):equals("coalesced") -- the warp's two rows of lanes read two elements of p: two sectors
    local wide = MM:gsub("block%(T, T%)", "block(32, 8)")
      :gsub("blockIdx%.y %* T %+ threadIdx%.y, j = blockIdx%.x %* T", "blockIdx.y * 8 + threadIdx.y, j = blockIdx.x * 32")
    expect(sig(wide)["global.p.load"]):equals("broadcast") -- one row of lanes: one element
    expect(mm["global.q.load"]):equals("coalesced")
    expect(mm["inputs.per_thread"]):equals("n*2")
  end)
  it("finds operands staged in shared memory, their tiles, padding and double buffering", function()
    local f = sig(MM_TILED)
    expect(f["stage.p"]):equals("16x16")
    expect(f["stage.q"]):equals("16x16")
    expect(f["stage.p.bank_ways"]):equals(1)
    local padded = sig((MM_TILED:gsub("tp%[T%]%[T%], tq%[T%]%[T%]", "tp[T][T + 1], tq[T][T + 1]")))
    expect(padded["stage.p"]):equals("16x16")
    expect(padded["stage.p.padded"]):equals(true)
    local d = sig(MM_DOUBLE)
    expect(d["stage.p"]):equals("16x16")
    expect(d["stage.p.buffers"]):equals(2)
    expect(d["pipeline"]):equals("double-buffer")
    expect(f["pipeline"]):is_nil()
  end)
  it("finds register accumulator tiles, vector widths and work per thread", function()
    local f = sig(MM_RTILE)
    expect(f["registers.acc"]):equals("4")
    expect(f["outputs.per_thread"]):equals("4")
    expect(f["block"]):equals("16x4")
    local v = sig(COPY4)
    expect(v["global.a.width"]):equals(4)
    expect(v["global.b.store"]):equals("coalesced")
    expect(v["outputs.per_thread"]):equals("4")
    expect(sig(COPY)["global.a.width"]):is_nil()
    expect(sig(COPY_COARSE)["outputs.per_thread"]):equals("4")
  end)
  it("finds how threads split and combine work, through a device function too", function()
    local w = sig(ROWSUM_WARP)
    expect(w["split"]):equals("warp")
    expect(w["reduce.combine"]):equals("shuffle")
    expect(w["global.m.load"]):equals("coalesced")
    local b = sig(ROWSUM_BLOCK)
    expect(b["split"]):equals("block")
    expect(b["reduce.combine"]):equals("tree")
    expect(b["shared.buf.bank_ways"]):equals(1)
    expect(sig(ROWSUM)["split"]):is_nil()
  end)
  it("finds persistent grids, atomics, private copies, scans and votes", function()
    local p = sig(COPY_PERSISTENT)
    expect(p["grid.fixed"]):equals(true)
    expect(p["loops.grid_stride"]):equals(true)
    expect(sig(HIST)["atomics.global"]):equals("atomicAdd")
    expect(sig(HIST)["global.h.store"]):equals("indirect")
    local h = sig(HIST_PRIVATE)
    expect(h["atomics.shared"]):equals("atomicAdd")
    expect(h["shared.exchange"]):is_nil()
    expect(sig(SCAN)["scan"]):equals("block")
    expect(sig(VOTE)["warp.vote"]):equals("__ballot_sync")
  end)
  it("reads hostile kernels without raising: huge trip counts, doubling chains, recursion, garbage", function()
    local head = "// @kl launch grid(1) block(32)\nextern \"C\" __global__ void k(const float *x, float *y) {\n"
    local loops, chain = {}, { "float a0 = x[threadIdx.x];" }
    for i = 1, 200 do loops[i] = string.format("for (long i%d = 0; i%d < (1L << 60); i%d += 1) y[i%d] = x[i%d];", i, i, i, i, i) end
    for i = 1, 200 do chain[#chain + 1] = string.format("int a%d = (int)a%d * (int)a%d;", i, i - 1, i - 1) end
    local texts = {
      head .. table.concat(loops, "\n") .. "\n}\n",
      head .. table.concat(chain, "\n") .. "\ny[a200] = 1.0f;\n}\n",
      "__device__ float f(const float *p, int n) { return f(p, n + 1) + p[n]; }\n" .. head .. "y[threadIdx.x] = f(x, threadIdx.x); }\n",
      head .. "y[[[ = x]]] ++ -- goto l; l: for(;;) ; }\n",
      head .. "int a = a + 1; int b; b = b * 2; y[a + b] = x[a]; }\n",
    }
    for i, text in ipairs(texts) do
      local s, why = schedule.signature(text, "k")
      check(s ~= nil, "hostile kernel %d: %s", i, tostring(why))
    end
    expect(schedule.signature(texts[1], "k").features["loops"]):equals(200)
  end)
  it("names the kernel it reads, and says why it cannot", function()
    local two = COPY .. COPY:gsub("void copy", "void copy2")
    local s, why = schedule.signature(two)
    expect(s):is_nil()
    expect(why):contains("name one")
    expect(schedule.signature(two, "copy2").kernel):equals("copy2")
    s, why = schedule.signature("int x;")
    expect(s):is_nil()
    expect(why):contains("no __global__")
  end)
end)

-- ---- deltas ---------------------------------------------------------------------

describe("a schedule delta", function()
  it("map: the coalescing remap", function()
    local d = step(ROWS, COLS)
    explained_as(d, "map(block=16x16,x=x)")
    expect(#d.changed):equals(2) -- src's loads and dst's stores
  end)
  it("stage: operands tiled through shared memory", function()
    explained_as(step(MM, MM_TILED), "stage(p,q,tile=16)")
  end)
  it("register_tile (with its block) and coarsen", function()
    explained_as(step(MM, MM_RTILE), "map(block=16x4,x=j) register_tile(4,1)")
    explained_as(step(COPY, COPY_COARSE), "coarsen(4)")
  end)
  it("vectorize, and its removal", function()
    explained_as(step(COPY, COPY4), "vectorize(4)")
    explained_as(step(COPY4, COPY), "-vectorize()")
  end)
  it("split_reduce: a warp a row, a block a row", function()
    explained_as(step(ROWSUM, ROWSUM_WARP), "split_reduce(warp,wpb=4)")
    local d = step(ROWSUM, ROWSUM_BLOCK)
    check(d.explained, "%s", table.concat(d.unexplained, "; "))
    expect(d.text):contains("split_reduce(block=128)")
  end)
  it("unroll, when the loops stay the loops", function()
    explained_as(step(DOT8, DOT8_UNROLLED), "unroll()")
  end)
  it("privatize: a scatter of atomics into a block's copy", function()
    explained_as(step(HIST, HIST_PRIVATE), "privatize()")
  end)
end)

describe("an unexplained step", function()
  it("explains double buffering as stage(buffers=2) (kir's two stages with the next tile in registers)", function()
    explained_as(step(MM_TILED, MM_DOUBLE), "stage(buffers=2)")
  end)
  it("explains a persistent grid whose threads take more outputs as persist, one whose threads only read more as a reduction over several blocks", function()
    explained_as(step(COPY, COPY_PERSISTENT), "persist(dim=x)")
    explained_as(step(BLOCKSUM, BLOCKSUM_GRID), "split_reduce(block=256,blocks=K)")
    -- threads that read more but never meet in a block: kir's blocks meet there first
    refused(step(ATOMICSUM, ATOMICSUM_GRID), "their partials never meeting in a block")
  end)
  it("says when no feature of the signature changed", function()
    local d = step(MM, MM_FMA)
    refused(d, "no feature of the schedule signature changed")
    expect(#d.changed):equals(0)
  end)
  it("says warp votes and data-dependent addresses have none", function()
    refused(step(COPY, VOTE), "warp votes")
    refused(step(HIST_PRIVATE, HIST), "address read from memory")
  end)
end)

describe("reproduced by kir", function()
  it("applies the delta to the lifted older kernel and compares the signatures", function()
    local d = delta.step(ROWS, COLS)
    expect(d.how):equals("kir")
    expect(d.kir.sequence):contains("map(")
    local t = delta.step(MM, MM_TILED)
    check(t.kir and t.kir.lifted, "the naive product does not lift")
    expect(t.explained):equals(true)
    -- kir's stage writes its own tiles: what differs from the written one is said
    check(t.kir.reproduced or #t.kir.differs > 0, "kir neither reproduced the step nor said what differs")
    -- a kernel that does not lift: explained by its signature alone
    local s = delta.step(MM_TILED, (MM_TILED:gsub("tp%[T%]%[T%], tq%[T%]%[T%]", "tp[T][T + 1], tq[T][T + 1]")))
    expect(s.explained):equals(true)
    expect(s.how):equals("signature")
    expect(s.kir.lifted):equals(false)
  end)
end)

-- ---- the seven lineages -------------------------------------------------------------

describe("the seven lineages", function()
  it("explains their steps as schedule deltas, and says why not where not", function()
    local by, explained, total, reproduced = {}, 0, 0, 0
    for _, name in ipairs(require("klineage.eval").LINEAGES) do
      local w = assert(require("klineage.workload").load(name))
      local r = delta.lineage(assert(delta.workload_versions(w)), { kernel = w.kernel, params = w.params })
      by[name] = r
      explained, total, reproduced = explained + r.explained, total + r.total, reproduced + r.reproduced
    end
    expect(total):equals(52)
    -- Measured 33 of 52 (63.5 %) on 2026-12-07 (the issue asks 80 %), 32
    -- before split_reduce(blocks=K), 31 before persist, 28 before
    -- stage(buffers=2): the others need primitives kir does not have (warp
    -- votes, shared-memory layouts, a warp-synchronous tail) or change the
    -- algorithm. A lower count is a regression; a higher one must come
    -- with a primitive.
    expect(explained):at_least(33)
    expect(by.transpose.explained):equals(6)
    -- transpose v0 -> v1 by stage's tile exchange: all but the padding
    -- (kir pads its square; v1 does not, v2 does)
    local t1 = by.transpose.steps[1].delta.kir
    expect(t1.sequence):equals("stage(tile=32)")
    expect(#t1.differs):equals(1)
    expect(t1.differs[1].feature):equals("stage.in.bank_ways")
    expect(by.sgemm.steps[1].delta.how):equals("kir") -- v0 -> v1, the coalescing map
    expect(by.sgemm.steps[2].delta.how):equals("kir") -- v1 -> v2, stage
    expect(reproduced):at_least(2)
    local function why(name, i) return table.concat(by[name].steps[i].delta.unexplained, "\n") end
    expect(by.sgemm.steps[7].delta.text):equals("stage(buffers=2)")
    expect(by.conv2d.steps[7].delta.text):equals("stage(buffers=2)")
    expect(why("conv2d", 8)):contains("exchange computed values") -- Winograd
    expect(by.reduction.steps[6].delta.text):equals("split_reduce(block=256,blocks=K)") -- a fixed grid's sum
    -- bfs's bottom-up levels loop over the grid to hand out work, not to sum
    expect(why("bfs", 6)):contains("a thread's reads not growing with the problem")
    expect(by.softmax.steps[6].delta.text):equals("persist(dim=x)") -- a block's rows in turns
    expect(why("raytrace", 4)):contains("no feature of the schedule signature changed")
    expect(why("bfs", 1)):contains("global memory")
    expect(by.conv2d.steps[2].delta.text):contains("unflatten")
  end)
end)

-- ---- the command ---------------------------------------------------------------------

describe("klineage deltas", function()
  local dir = scratch_dir()
  write_file(dir .. "/v0.cu", ROWS)
  write_file(dir .. "/v1_cols.cu", COLS)
  write_file(dir .. "/v2.cu", COPY:gsub("copy", "scale")) -- another kernel: read as it is
  write_file(dir .. "/notes.txt", "not a version")
  it("prints each step and the share", function()
    local out, code = klineage("deltas", dir, "--verbose")
    expect(code):equals(0)
    expect(out):contains("v0.cu -> v1_cols.cu")
    expect(out):contains("map(block=16x16,x=x)")
    expect(out):contains("global.dst.store")
    expect(out):matches("schedule%-deltas%-explained: %d/2 steps\n")
    expect(out):contains("schedule-deltas-reproduced-by-kir:")
  end)
  it("gives JSON", function()
    local out, code = klineage("deltas", dir, "--json", "--no-kir")
    expect(code):equals(0)
    local j = cjson.decode(out)
    expect(j.total):equals(2)
    expect(j.lineages[1].steps[1].delta.text):equals("map(block=16x16,x=x)")
  end)
  it("refuses bad input in one line, exit 2", function()
    local out, code = klineage("deltas", dir .. "/missing")
    expect(code):equals(2)
    local one = scratch_dir()
    write_file(one .. "/v0.cu", ROWS)
    out, code = klineage("deltas", one)
    expect(code):equals(2)
    expect(out):contains("a step needs two")
    write_file(one .. "/v1.cu", COPY .. COPY:gsub("void copy", "void copy2"))
    out, code = klineage("deltas", one)
    expect(code):equals(2)
    expect(out):contains("name one with --kernel")
    write_file(one .. "/v1_again.cu", COPY)
    out, code = klineage("deltas", one)
    expect(code):equals(2)
    expect(out):contains("both version 1")
    out, code = klineage("deltas", "--help")
    expect(code):equals(0)
    expect(out):contains("schedule-deltas-explained")
  end)
end)
