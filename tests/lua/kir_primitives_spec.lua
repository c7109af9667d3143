-- Each schedule primitive on the families where it is legal, through the
-- real gate on emu against the task's C reference at every test size;
-- and each illegal case refused with its reason, before any gate.
-- KL_KIR=sample (make test): every legal case's text and reasons, and the
-- gate for the first case of each leading primitive and the cases marked
-- "sample" (a form of its own, as stage's tile exchange); KL_KIR=rest (label
-- long, lua/kir_primitives_rest): the gate for the other legal cases;
-- all (the default, by hand): everything once.
package.path = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$") .. "/?.lua;" .. package.path
local support = require "kir_support"
local sample = dofile(support.root .. "/tests/lua/site_sample.lua")
local kir = require "klineage.kir"
local mode = sample.mode("KL_KIR")

local by_name = {}
for _, t in ipairs(support.tasks()) do by_name[t.name] = t end
for _, t in ipairs(support.extra()) do by_name[t.name] = t end
-- user-style kernels for stage's tile exchange, each checked against itself
for _, name in ipairs({ "exchange_flat", "exchange_batched", "exchange_permute", "exchange_pair", "window_rows", "causal_rows", "filter2d", "few_rows", "dot", "bin_min" }) do
  local dir = support.root .. "/tests/fixtures/workloads/" .. name
  by_name[name] = { name = name, dir = dir, kernel = dir .. "/v0.cu",
    text = assert(require("klineage.base.files").read_text(dir .. "/v0.cu")) }
end

-- { task, schedule, words the emitted kernel must hold, words a legality
-- reason must hold [, "sample": gated in make test too] }
local LEGAL = {
  { "jacobi2d", "map(x=j,y=i,block=32x8)", "int j = blockIdx.x * 32 + threadIdx.x", "j on threadIdx.x" },
  { "stencil3d", "map(x=x,y=y,z=z,block=32x4x2)", "int x = blockIdx.x * 32 + threadIdx.x", "unit stride" },
  { "attention_scores", "map(x=j,y=i,block=32x8)", "block(32, 8)", "S[" },
  { "axpby", "coarsen(4)", "for (int u_ = 0; u_ < 4; ++u_)", "4 points of i" },
  { "batched_gemm", "coarsen(2)", "continue;", "every store moves with t" },
  { "histogram", "coarsen(4)", "atomicAdd", "atomics commute" },
  { "depthwise_conv2d", "map(x=w,y=h,block=64x4) coarsen(2,axis=h)", "u_ * 4", "points of h" },
  { "gemv", "split_reduce(warp)", "__shfl_xor_sync", "reassociates" },
  { "row_argmax", "split_reduce(warp,wpb=4)", "best_o < best", "smaller index" },
  { "nearest_neighbor", "split_reduce(block=128)", "__syncthreads", "smaller index" },
  { "layernorm", "split_reduce(warp)", "for (int c = lane_; c < cols; c += 32) y[", "stores apart" },
  { "spmv_csr", "split_reduce(warp)", "row_ptr[r] + lane_", "reduces sum by +" },
  -- a column reduction: the columns keep their coalesced lanes, rows split along y
  { "colsum", "split_reduce(y=4)", "for (int r = ly_; r < rows; r += 4) sum += a[(long)r * cols + c];",
    "4 threads along threadIdx.y", "sample" },
  -- an argmax's merge reads the key at another lane's index: a thread past
  -- the guard must leave before it (kir_matrix found the fault on emu)
  { "row_argmax", "split_reduce(y=4)", "__syncthreads();\n  if (!live_) return;", "ties go", "sample" },
  -- a body's own position read before the loop: a thread past the guard
  -- stays for the barrier and reads nothing
  { "nbody", "map(block=64,x=i) split_reduce(y=8)", "float xi = live_ ? px[i] : 0;", "reads nothing", "sample" },
  { "rmsnorm", "split_reduce(block=128)", "part_ss_1[warp_]", "shared memory" },
  -- a group of lanes an output (short CSR rows): a group past the bounds
  -- must join the shuffles, read nothing, and store nothing
  { "spmv_csr", "split_reduce(warp,lanes=8)", "int r = blockIdx.x * 32 + threadIdx.x / 8;", "group of 8", "sample" },
  { "row_argmax", "split_reduce(warp,lanes=4)", "if (live_) {\n      if (row[best_o] > row[best]", "reads nothing", "sample" },
  -- a block's warps still shuffle inside a warp (offsets from 16)
  { "layernorm", "split_reduce(block=256)", "for (int o_ = 16; o_ > 0; o_ /= 2) sq +=", "shared memory", "sample" },
  { "layernorm", "split_reduce(warp,lanes=16)", "for (int c = lane_; c < cols; c += 16) y[", "stores apart" },
  -- no top digit among the lets: the row start is `i - t`, and i, rebuilt
  -- from the digits, keeps it right
  { "conv1d", "unflatten(block=32x8)", "long i = (long)top_ * len + t;", "top_ < rows", "sample" },
  -- a row's pointer (q depends on i alone) is declared once a row, so the
  -- patch's 16 products all read the staged tiles (before, 8 of them read
  -- global memory through copies of the pointers staging did not know)
  { "attention_scores", "map(x=j,y=i,block=32x8) register_tile(4,4) stage()",
    "dot_1_1 += sQ_6[threadIdx.y][d - t0_] * sK_3[threadIdx.x][d - t0_];", "16 accumulators", "sample" },
  { "conv1d", "unroll(4)", "k + 3 < R + 1", "keep their order" },
  { "nbody", "unroll(4) coarsen(2)", "px[j + 3]", "keep their order" },
  { "batched_matvec", "split_reduce(warp) unroll(2)", "j += 64", "reduces s by +" },
  { "maxpool2d", "coarsen(2)", "BLOCK * 2", "points of t" },
  { "permute3d", "vectorize(4)", "*(float4 *)&out[o0_] = out_v;", "out moved" },
  { "axpby", "vectorize(4)", "*(const float4 *)&x[i0_]", "scalar tail" },
  { "elementwise_chain", "vectorize(2)", "float2 y_v;", "2-wide" },
  { "batchnorm_infer", "vectorize(4)", "y_v.w = ", "x and y moved" },
  { "bias_gelu", "map(block=128) vectorize(4)", "bias[(i0_ + 3) % cols]", "4 consecutive points" },
  { "matmul_abt", "register_tile(2,2) unroll(2)", "acc_1_1 += A[m_1 * K + (k + 1)]", "4 accumulators" },
  { "pairwise_dist", "register_tile(4,2)", "s_3_1", "no reassociation" },
  -- an 8 x 8 patch over a 32 x 8 block spans 256 x 64: at the test sizes
  -- (L = 50, 64) every patch but the first points is clamped
  { "attention_scores", "map(x=j,y=i,block=32x8) register_tile(8,8) stage(tile=16)", "dot_7_7 += sQ_", "clamped", "sample" },
  { "attention_scores", "map(x=j,y=i,block=32x8) register_tile(2,2)", "S[((long)h * L + i_1) * L + j_1] = dot_1_1 / sqrtf((float)D)", "clamped" },
  { "depthwise_conv2d", "register_tile(2,2)", "acc_1_1", "loop over i" },
  { "jacobi2d", "map(x=j,y=i,block=32x8) stage()", "__shared__ float su_1[8 + 2][32 + 2];", "offsets i -1..1, j -1..1" },
  { "stencil3d", "stage()", "su_1[threadIdx.z + 2][threadIdx.y + 1][threadIdx.x + 1]", "an early return guards the edges" },
  { "batched_gemm", "unflatten() register_tile(2,2)", "long b = blockIdx.z;", "b < batch" },
  { "batched_gemm", "unflatten() stage(tile=8)", "sA_1[threadIdx.y][p - t0_]", "shared by the threads along j" },
  -- the bench-shaped form (a matrix a block, the whole reduction one tile),
  -- at the odd test sizes: 13 x 7 outputs of a 16 x 16 block, 19 = 16 + 3
  { "batched_gemm", "unflatten(block=16x16) stage(tile=16,buffers=2) persist(dim=z,blocks=7)", "sB_2[buf_][threadIdx.x][p - t0_]",
    "the block loads a[i * K + p]", "sample" },
  { "maxpool2d", "unflatten()", "grid(cdiv(cdiv(W, 2), 32), cdiv(cdiv(H, 2), 8), C * N)", "ow < OW, oh < OH" },
  { "index_select", "unflatten()", "long long t = (long long)r * k + j;", "j < k, r < rows" },
  { "batched_matvec", "unflatten() split_reduce(warp)", "const long long tid = (long long)b * rows + i;", "reduces s by +" },
  { "scan_rows", "scan(block=128)", "__shfl_up_sync", "one block of 128 a row" },
  { "histogram", "privatize(items=8)", "__shared__ unsigned int priv_[256];", "integer updates commute exactly" },
  -- one target every thread shares: a register a thread, one atomic a block
  { "dot", "privatize(items=8)", "if (tid_ == 0) {\n    for (int w_ = 1; w_ < 8; w_++) acc_ += part_[w_];\n    atomicAdd(out, acc_);",
    "every thread adds to out, one place", "sample" },
  -- a min's shared copy starts at min's identity (bins starting at 5000
  -- above every value: a copy that started at 0 merged nothing, tried)
  { "bin_min", "privatize(items=8)", "priv_[e_] = 2147483647;", "atomicMin's identity 2147483647", "sample" },
  { "matmul_abt", "stage(tile=16)", "__shared__ float sB_2[TILE][17]", "shared by the threads along n" },
  -- a register tile's points staged per step: the rows one block apart
  { "matmul_abt", "register_tile(2,2) stage()", "int gn_1_ = blockIdx.x * (TILE * 2) + ln0__ + 1 * TILE;",
    "B[n_1 * K + k] (shared by the threads along m0_)", "sample" },
  -- double buffering: the next tile through registers into the other stage
  { "matmul_abt", "register_tile(2,2) stage(buffers=2,tile=16)", "sA_1[buf_ ^ 1][lm0__][kk_] = pA_1[u_];",
    "in two stages", "sample" },
  { "pairwise_dist", "stage(buffers=2,tile=8)", "int buf_ = 0;", "one barrier a tile" },
  -- B[k * N + col] is loaded along col, its unit stride, not along k
  -- (a 32 x 32 block: without the bound ptxas gives it more registers than
  -- a block of 1024 can have, and the gate refuses it as the device would)
  { "sgemm/v0_naive.cu", "register_tile(4,4) stage(tile=16) bound(blocks=1)", "const int kk_ = e_ / BLOCK_DIM;", "16 accumulators" },
  { "gemv", "stage()", "sx_1[j - t0_]", "not staged: A[" },
  { "pairwise_dist", "stage(X,Y,tile=8)", "__syncthreads();", "order of the sum is unchanged" },
  { "nbody", "map(block=128) stage(tile=64)", "smass_4[j - t0_]", "mass[j] (shared by the threads along i)" },
  { "transpose/v0_naive.cu", "stage(in)", "out[c * rows + r] = sin_1[threadIdx.x][u_ * 8 + threadIdx.y];",
    "loaded with lanes along c and stored with lanes along r", "sample" },
  { "exchange_flat", "unflatten() stage()", "grid(cdiv(rows, 32), cdiv(cols, 32)) block(32, 8)",
    "not exchanged: bias[i] is unit-stride along i, like the store" },
  { "exchange_batched", "unflatten() stage(in,tile=16)", "__shared__ double sin_1[16][16 + 1];", "a 16x8 block takes 2 rows" },
  { "exchange_permute", "stage(in)", "grid(cdiv(B, 32), cdiv(C, 32), A) block(32, 8)", "a 32x32 square of (b, c)" },
  { "exchange_pair", "stage(tile=16,block=16x16)", "sy_2[threadIdx.x][u_ * 16 + threadIdx.y]", "exchanges x, y" },
  -- a sliding window: a zero-padded convolution's signal loaded once a
  -- tile, an element only where a live thread reads it under its condition
  { "conv1d", "unflatten(block=256x1) stage()", "sum += w[k + R] * sx_1[threadIdx.x + (k - t0_)];",
    "a window of x sliding along t: 256 + 31 elements", "sample" },
  { "window_rows", "stage(tile=8)", "__shared__ float sx_1[8][32 + 7];", "sliding along t", "sample" },
  -- a 2-D filter's nest: the inner loop tiled, the outer one run by every
  -- thread alike; a window a row of threads, its condition reading the row
  { "filter2d", "stage(tile=8)", "for (int i = -R; i <= R; i++) {\n    for (int t0_ = -R; t0_ < R + 1; t0_ += 8) {",
    "the loop over j (nested in the loop over i, which every thread of the block runs alike) runs in tiles of 8", "sample" },
  { "filter2d", "map(x=x,y=y,block=64x4) stage(tile=4)", "__shared__ float sin_1[4][64 + 3];", "a window of in sliding along x" },
  -- a causal filter's x[t - k]: the window slides back, each element
  -- loaded at the smallest live thread that reads it
  { "causal_rows", "stage(tile=8)", "s += w[k] * sx_1[threadIdx.y][threadIdx.x - (k - t0_) + 7];",
    "a window of x sliding back along t: 32 + 7 elements a tile for 32 x 8 reads; each loaded where a live thread reads it, under its conditions, which see t and k only as their difference",
    "sample" },
  -- a walk back to each segment's start as a segmented block scan; one
  -- chunk a block of 64 walks back for the open segment in every block
  { "segmented_scan", "segscan()", "f_ = i == 0 || head[i] ? 1 : 0;", "a sum over its segment", "sample" },
  { "segmented_scan", "segscan(block=64,chunks=1)", "const long first_ = (long)chunk_ * 64;", "walk back", "sample" },
  -- persist: few blocks take many turns at the test sizes; a return ends the
  -- turn, and a turn that used shared memory ends at a barrier
  -- (emu passed a turn without its closing barrier when tried: the text is checked)
  { "layernorm", "split_reduce(block=256) persist(dim=x,blocks=3)", "if (r >= rows) goto persist_next_;",
    "refilled only after every thread is done", "sample" },
  { "layernorm", "split_reduce(block=256) persist(dim=x,blocks=3)", "persist_next_:\n    __syncthreads();\n  }",
    "refilled only after every thread is done" },
  { "gemv", "split_reduce(warp,lanes=8) persist(dim=x,blocks=2)", "if (!live_) goto persist_next_;", "computed once", "sample" },
  { "bias_gelu", "coarsen(4) persist(dim=x,blocks=2)", "for (long bx_ = blockIdx.x;", "computed once" },
  -- one block a row along y: folded, it launches whatever the rows
  { "spmm_csr", "split_reduce(warp) persist(dim=y,blocks=4)", "for (int by_ = blockIdx.y; by_ < R; by_ += gridDim.y) {",
    "blocks b, b + 4, b + 8", "sample" },
  { "batched_gemm", "unflatten(block=32x8) persist(dim=z,blocks=3)", "for (long bz_ = blockIdx.z; bz_ < batch; bz_ += gridDim.z) {",
    "unfolded grid of batch", "sample" },
  { "colsum", "split_reduce(y=4) persist(dim=x,blocks=2)", "__syncthreads();\n      if (!live_) goto persist_next_;", "turns' count" },
  -- bound: a hint to ptxas, after the block the schedule set, results unchanged
  { "axpby", "bound(blocks=8)", 'extern "C" __global__ void __launch_bounds__(256, 8) axpby(', "at most 32 registers" },
  { "gemv", "split_reduce(warp,lanes=8) bound(blocks=4) persist(dim=x,blocks=2)", "__launch_bounds__(256, 4) gemv(",
    "so that 4 blocks fit", "sample" },
  { "attention_scores", "map(x=j,y=i,block=32x8) register_tile(4,4) stage() bound(blocks=4)", "__launch_bounds__(256, 4)",
    "at most 64 registers" },
  { "few_rows", "split_reduce(block=256,blocks=16)", "last_ = atomicAdd(&kl_split_done_[blockIdx.x], (unsigned int)1) == 15;",
    "the last of the 16 to count itself in", "sample" },
  { "row_argmax", "split_reduce(block=128,blocks=3)", "row[((volatile int *)kl_split_part_best_1)[blockIdx.x * 3 + c_]]",
    "ties go to the smaller index" },
}

-- The gate runs, in make test, on the first case of each leading primitive.
local gated_in_sample, leading_seen = {}, {}
for i, c in ipairs(LEGAL) do
  local lead = c[2]:match("^(%w+)")
  if not leading_seen[lead] then leading_seen[lead], gated_in_sample[i] = true, true end
  if c[5] == "sample" then gated_in_sample[i] = true end
end

describe("legal schedules pass the gate on emu", function()
  for i, c in ipairs(LEGAL) do
    local gated = sample.keep(mode, gated_in_sample[i] == true)
    if mode == "rest" and not gated then goto next_case end
    it(c[1] .. ": " .. c[2] .. (gated and "" or " (text and reasons; its gate under lua/kir_primitives_rest)"), function()
      local t = by_name[c[1]]
      local text, log = kir.schedule(t.text, c[2])
      if not text then fail("refused: %s", tostring(log)) end
      expect(text):contains(c[3])
      local reasons = {}
      for _, l in ipairs(log) do
        expect(l.legal):is_true()
        expect(l.reason):matches("^legal: ")
        reasons[#reasons + 1] = l.reason
      end
      expect(table.concat(reasons, " | ")):contains(c[4])
      if gated then
        local ok, r = support.gate(t, text, c[2])
        if not ok then fail("%s\n%s", r, text) end
      end
    end)
    ::next_case::
  end
end)

describe("split_reduce(blocks=K) past its slots", function()
  it("reduces the outputs past the file-scope slots with one block each, the others across K blocks", function()
    local split = require "klineage.kir.primitives.split_reduce"
    local saved = split.SLOTS
    split.SLOTS = 64 -- 4 slots of 16 blocks: rows 4 and up of the 45-row test go alone
    local ok, text, log = pcall(kir.schedule, by_name.few_rows.text, "split_reduce(block=256,blocks=16)")
    split.SLOTS = saved
    assert(ok, text)
    if not text then fail("refused: %s", tostring(log)) end
    expect(text):contains("const bool alone_ = blockIdx.x >= (unsigned int)4;")
    expect(log[1].reason):contains("past 4 outputs one block takes an output alone")
    local gok, r = support.gate(by_name.few_rows, text, "split_reduce(blocks=16), 4 slots")
    if not gok then fail("%s\n%s", r, text) end
  end)
end)

local CSR_SCATTER = [==[
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void scatter(int n, const int *idx, const float *x, float *out) {
  int i = blockIdx.x * 256 + threadIdx.x;
  if (i >= n) return;
  out[idx[i]] = x[i];
}
]==]

local STRIDED_STORE = [==[
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void spread(int n, const float *x, float *y) {
  int i = blockIdx.x * 256 + threadIdx.x;
  if (i < n) y[2 * i] = x[i];
}
]==]

local IN_PLACE = [==[
// @kl launch grid(cdiv(n, 128)) block(128)
extern "C" __global__ void accumulate_rows(int n, int m, const float *a, float *y) {
  int i = blockIdx.x * 128 + threadIdx.x;
  if (i >= n) return;
  float s = 0.0f;
  for (int j = 0; j < m; ++j) s += a[i * m + j] * y[j];
  y[i] = y[i] + s;
}
]==]

local NO_EDGE_GUARD = [==[
// @kl launch grid(cdiv(n, 128)) block(128)
extern "C" __global__ void forward_difference(int n, const float *u, float *d) {
  int i = blockIdx.x * 128 + threadIdx.x;
  if (i >= n) return;
  d[i] = u[i + 1] - u[i];
}
]==]

local WEIGHTED_PREFIX = [==[
// @kl launch grid(cdiv(rows * cols, 256)) block(256)
extern "C" __global__ void decayed_prefix(int rows, int cols, const float *x, const float *w, float *y) {
  long t = (long)blockIdx.x * 256 + threadIdx.x;
  if (t >= (long)rows * cols) return;
  int c = (int)(t % cols);
  const float *row = x + (t - c);
  float sum = 0.0f;
  for (int k = 0; k <= c; ++k) sum += row[k] * w[c - k];
  y[t] = sum;
}
]==]

local TRANSPOSE_REPS = [==[
// @kl launch grid(cdiv(n, 32), cdiv(m, 8)) block(32, 8)
extern "C" __global__ void transpose_reps(int m, int n, int reps, const float *in, float *out) {
  int j = blockIdx.x * 32 + threadIdx.x;
  int i = blockIdx.y * 8 + threadIdx.y;
  if (i >= m || j >= n) return;
  for (int r = 0; r < reps; ++r) out[((long)r * n + j) * m + i] = in[(long)i * n + j];
}
]==]

local PERMUTED_ROWS = [==[
// @kl launch grid(cdiv(n, 32), cdiv(m, 8)) block(32, 8)
extern "C" __global__ void gather_transpose(int m, int n, const int *perm, const float *in, float *out) {
  int j = blockIdx.x * 32 + threadIdx.x;
  int i = blockIdx.y * 8 + threadIdx.y;
  if (i < m && j < n) out[(long)j * m + i] = in[(long)perm[i] * n + j];
}
]==]

-- a window's read under conditions that see t and k apart: the elements
-- a thread skips are not a function of t + k
-- nests stage may not tile inside: an outer bound a thread decides, a
-- statement between the loops, a condition on a thread axis the index
-- does not read (which thread of the window's row would decide it?)
local function nest_kernel(outer, between, cond)
  return string.format([==[
// @kl launch grid(cdiv(W, 32), cdiv(H, 8)) block(32, 8)
extern "C" __global__ void nest(int H, int W, int R, const float *in, float *out) {
  int x = blockIdx.x * 32 + threadIdx.x;
  int y = blockIdx.y * 8 + threadIdx.y;
  if (x >= W || y >= H) return;
  float s = 0.0f;
  for (int i = 0; i < %s; ++i) {
    %s
    for (int j = 0; j < R; ++j) {
      if (%s) s += in[(long)i * W + x + j];
    }
  }
  out[y * W + x] = s;
}
]==], outer, between, cond)
end

-- a sliding sum under a condition, each window case its own: a read two
-- samples apart an iteration (no window of B + T - 1), a backward window
-- under a condition that sees t and k apart, a forward one skipping a tap
local function window_kernel(cond, index)
  return string.format([==[
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void window(int n, int R, const float *x, float *y) {
  int t = blockIdx.x * 256 + threadIdx.x;
  if (t >= n) return;
  float s = 0.0f;
  for (int k = 0; k < R; ++k) {
    if (%s) s += x[%s];
  }
  y[t] = s;
}
]==], cond, index)
end
local WINDOW_STRIDE2 = window_kernel("t - 2 * k >= 0", "t - 2 * k")
local WINDOW_BACK_APART = window_kernel("t - k >= 0 && t + k < n", "t - k")
local WINDOW_SKIP_CENTER = window_kernel("k != 1 && t + k < n", "t + k")

-- a read in a ?: branch: it may not happen, so no form stages it
local TERNARY_READ = [==[
// @kl launch grid(cdiv(N, 16), cdiv(M, 16)) block(16, 16)
extern "C" __global__ void lower_mm(int M, int N, int K, const float *A, const float *B, float *C) {
  int n = blockIdx.x * 16 + threadIdx.x;
  int m = blockIdx.y * 16 + threadIdx.y;
  if (m >= M || n >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += k <= m ? A[m * K + k] * B[k * N + n] : 0.0f;
  C[m * N + n] = acc;
}
]==]

-- a guard that says more than the extent: a window's representative,
-- chosen from the extent alone, could be a dead thread
local WINDOW_GUARD = [==[
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void tail_sum(int n, int R, const float *x, float *y) {
  int t = blockIdx.x * 256 + threadIdx.x;
  if (t >= n || t % 2 == 1) return;
  float s = 0.0f;
  for (int k = 0; k < R; ++k) s += x[t + k];
  y[t] = s;
}
]==]

-- a condition that reads memory: the fill would read the mask elsewhere
-- (the mask itself, read unconditionally, is a window stage() may take)
local WINDOW_MASK = [==[
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void masked(int n, int R, const int *mask, const float *x, float *y) {
  int t = blockIdx.x * 256 + threadIdx.x;
  if (t >= n) return;
  float s = 0.0f;
  for (int k = 0; k < R; ++k) {
    if (mask[t + k]) s += x[t + k];
  }
  y[t] = s;
}
]==]

-- segscan's walk back, with the declarations and the walk given
local function walk_kernel(decl, walk)
  return [==[
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void seg(int n, const int *head, const float *x, float *y) {
  int i = blockIdx.x * 256 + threadIdx.x;
  if (i >= n) return;
  ]==] .. decl .. "\n  " .. walk .. [==[

  y[i] = sum;
}
]==]
end

local LOWER_TRANSPOSE = [==[
// @kl launch grid(cdiv(n, 32), cdiv(n, 8)) block(32, 8)
extern "C" __global__ void lower_transpose(int n, const float *in, float *out) {
  int j = blockIdx.x * 32 + threadIdx.x;
  int i = blockIdx.y * 8 + threadIdx.y;
  if (i < n && j < n) out[j * n + i] = j <= i ? in[i * n + j] : 0.0f;
}
]==]

local UNGUARDED_TRANSPOSE = [==[
// @kl launch grid(n / 32, n / 32) block(32, 32)
extern "C" __global__ void exact_transpose(int n, const float *in, float *out) {
  int j = blockIdx.x * 32 + threadIdx.x;
  int i = blockIdx.y * 32 + threadIdx.y;
  out[j * n + i] = in[i * n + j];
}
]==]

local ATOMIC_TRANSPOSE = [==[
// @kl launch grid(cdiv(n, 32), cdiv(m, 8)) block(32, 8)
extern "C" __global__ void add_transposed(int m, int n, const float *in, float *out) {
  int j = blockIdx.x * 32 + threadIdx.x;
  int i = blockIdx.y * 8 + threadIdx.y;
  if (i < m && j < n) atomicAdd(&out[j * m + i], in[i * n + j]);
}
]==]

-- { kernel (task name or text), schedule, words of the refusal }
local OWN_BOUNDS = [==[
// @kl launch grid(cdiv(n, 128)) block(128)
extern "C" __global__ __launch_bounds__(128) void twice(int n, const float *x, float *y) {
  int i = blockIdx.x * 128 + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}
]==]

local ILLEGAL = {
  { "axpby", "bound(blocks=16)", "16 blocks of 256 threads exceed the 2048 threads a multiprocessor holds" },
  { "axpby", "bound(blocks=2) bound(blocks=4)", "already bounded" },
  { "axpby", "bound(blocks=0)", "K from 1 to 32" },
  { OWN_BOUNDS, "bound(blocks=2)", "the kernel has its own __launch_bounds__" },
  { "gemv", "bound(blocks=2) persist(dim=x,blocks=2) bound(blocks=4)", "persist goes last" },
  { "cummax_cols", "split_reduce(warp)", "a scan, not a reduction" },
  { "gemv", "persist(dim=y,blocks=4)", "no output axis on blockIdx.y" },
  -- the turn's index would shadow a parameter of the same name
  { [==[
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void shadow(int n, float bx_, const float *a, float *b) {
  int i = blockIdx.x * 256 + threadIdx.x;
  if (i >= n) return;
  b[i] = a[i] * bx_;
}
]==], "persist(dim=x,blocks=2)", "the kernel already names bx_" },
  { "spmm_csr", "split_reduce(warp) persist(dim=y,blocks=70000)", "blocks is 1 to 65535 along y" },
  { "gemv", "persist(dim=x,blocks=2) persist(dim=x,blocks=2)", "persist goes last" },
  { "gemv", "persist(dim=x,blocks=2) split_reduce(warp)", "persist goes last" },
  { "axpby", "split_reduce(warp)", "no reduction loop" },
  { "segmented_scan", "split_reduce(warp)", "opaque loop" },
  { "histogram", "split_reduce(warp)", "an atomic outside the split loops" },
  { CSR_SCATTER, "coarsen(4)", "is indirect: two points of one thread may write the same place" },
  { "rmsnorm", "map(x=r)", "blockIdx alone" },
  { "jacobi2d", "map(x=j,y=i,block=64x32)", "CUDA allows 1024" },
  { "jacobi2d", "map(x=j,y=j)", "two thread dimensions" },
  { "axpby", "coarsen(4) coarsen(2)", "already coarsened" },
  { "gemv", "coarsen(2) split_reduce(warp)", "coarsen goes last" },
  { "segmented_scan", "unroll(4)", "no constant-step loop" },
  { "axpby", "frobnicate(3)", "no primitive named frobnicate" },
  { "jacobi2d", "stage(buffers=2)", "has no reduction loop" },
  { "colsum", "split_reduce(y=8)", "256 x 8 threads a block: CUDA allows 1024" },
  { "attention_scores", "split_reduce(y=4)", "only the axis on x may" },
  { "layernorm", "split_reduce(y=4)", "more than one top-level loop" },
  { IN_PLACE, "split_reduce(y=4)", "both read and written" },
  -- each of these once passed its check: the later primitive undid what
  -- the earlier one had built on the block. The gate on emu found the
  -- first three wrong or faulting; the last computed every point four
  -- times (its points strided by 16, its blocks by 32 and 8)
  { "axpby", "vectorize(4) coarsen(4)", "does not compose" },
  { "permute3d", "vectorize(4) map(block=128)", "map goes before vectorize" },
  { "matmul_abt", "register_tile(2,2) stage() map(x=n0_,y=m0_,block=32x8)", "map goes before stage" },
  { "matmul_abt", "register_tile(2,2) map(x=n0_,y=m0_,block=32x8)", "map goes before register_tile" },
  { "matmul_abt", "stage(buffers=3)", "buffers=1 or buffers=2" },
  { "gemv", "split_reduce(block=100)", "whole warps" },
  { "gemv", "split_reduce(warp,lanes=3)", "lanes is 2, 4, 8, 16 or 32" },
  { "gemv", "split_reduce(block=256,lanes=4)", "groups the lanes of a warp" },
  { "gemv", "split_reduce(warp,blocks=4)", "blocks=K gives an output K blocks: split_reduce(block=B, blocks=K)" },
  { "gemv", "split_reduce(block=256,blocks=1)", "blocks is 2 to 1024" },
  { "layernorm", "split_reduce(block=256,blocks=4)", "blocks=K splits the kernel's one loop" },
  { "spmm_csr", "split_reduce(block=256,blocks=4)", "the grid already spans y or z" },
  { "gemv", "split_reduce(block=256,blocks=4) persist(dim=x,blocks=2)", "folding the grid would break the count" },
  { "// kl_split_done_ is the user's\n" .. by_name.gemv.text, "split_reduce(block=256,blocks=4)", "the file already names kl_split_" },
  { "gemv", "stage(A)", "no reuse" },
  { [==[
// @kl launch grid(cdiv(n * m, 128)) block(128)
extern "C" __global__ void shift_rows(int n, int m, int top_, const float *a, float *b) {
  long i = (long)blockIdx.x * 128 + threadIdx.x;
  if (i >= (long)n * m) return;
  int c = (int)(i % m);
  b[i] = a[i - c] + top_;
}
]==], "unflatten()", "no top digit (i / (N * ...)) among the per-point lets, and top_ is taken" },
  { "gemv", "unflatten()", "no inner digit" },
  { "gemv", "scan()", "does not run up to the point's own place in a row" },
  { "segmented_scan", "scan()", "a loop that is not a reduction (opaque)" },
  { WEIGHTED_PREFIX, "scan()", "w[c - k] depends on the point's place c" },
  { "scatter_add", "privatize()", "the bin index index[i] reads int: no range the IR can prove" },
  { "gemv", "privatize()", "stores y[i] besides the atomic" },
  { [==[
// @kl launch grid(cdiv(n, 100)) block(100)
extern "C" __global__ void odd_block(int n, const float *x, float *out) {
  int i = blockIdx.x * 100 + threadIdx.x;
  if (i < n) atomicAdd(out, x[i]);
}
]==], "privatize()", "a block of 100 threads: the one-target form sums whole warps" },
  { "segmented_scan", "privatize()", "stores y[i] besides the atomic" },
  { IN_PLACE, "split_reduce(warp)", "y is both read and written" },
  { IN_PLACE, "stage(y)", "written by the kernel too" },
  { "spmm_csr", "register_tile(2,2)", "the points would disagree on the trip count" },
  { "jacobi2d", "register_tile(2,2)", "no top-level reduction loop" },
  { "gemv", "register_tile(2,2)", "axes on threadIdx.x and threadIdx.y" },
  { "cast_f16", "vectorize(4)", "no vector type" },
  { STRIDED_STORE, "vectorize(4)", "the store y[2 * i] is not contiguous in i" },
  { "jacobi2d", "vectorize(2)", "one axis with threads" },
  { "gemv", "vectorize(4)", "a loop in the per-point code" },
  { "histogram", "vectorize(4)", "as a statement" },
  { "spmv_csr", "stage()", "threads of a block would disagree on the trip count" },
  { "conv1d", "stage()", "read under a condition" },
  { walk_kernel("float sum = 0.0f;", "for (int j = i;; ++j) { sum += x[j]; if (j == n - 1 || head[j + 1]) break; }"),
    "segscan()", "the walk does not step back by one" },
  { walk_kernel("float sum = 0.0f;", "for (int j = i;; --j) { if (head[j]) break; sum += x[j]; }"),
    "segscan()", "the walk's body is not" },
  { walk_kernel("float sum = 0.0f;", "for (int j = i;; --j) { sum += x[j] * x[i]; if (j == 0 || head[j]) break; }"),
    "segscan()", "reads i: not every thread can compute it" },
  { walk_kernel("float sum = 1.0f;", "for (int j = i;; --j) { sum += x[j]; if (j == 0 || head[j]) break; }"),
    "segscan()", "sum does not start at 0" },
  { walk_kernel("float sum = 0.0f;", "for (int j = i;; --j) { sum += y[j]; if (j == 0 || head[j]) break; }"),
    "segscan()", "reads what the kernel writes" },
  { walk_kernel("float sum = 0.0f;", "for (int j = i - 1;; --j) { sum += x[j]; if (j == 0 || head[j]) break; }"),
    "segscan()", "the walk does not start at the point" },
  { walk_kernel("float sum = 0.0f;", "for (int j = i;; --j) { sum += x[j]; if (j == 0 || head[j]) break; }"):gsub("y%[i%] = sum;", "if (sum > 0) return; y[i] = sum;"),
    "segscan()", "the code after the walk returns" },
  { WINDOW_SKIP_CENTER, "stage()", "its condition k != 1 && t + k < n does not read t and k only as t + k" },
  { WINDOW_STRIDE2, "stage()", "its index does not read t and k only as t + k or t - k" },
  { nest_kernel("y", "", "x + j < W"), "stage()", "the bounds of the loop over i depend on y" },
  { nest_kernel("R", "s *= 0.5f;", "x + j < W"), "stage()", "nothing to stage; nor a tile exchange: a loop in the per-point code" },
  { nest_kernel("R", "", "x + j < W && y > 2"), "stage()", "its condition x + j < W && y > 2 reads y, which only its own thread knows" },
  { nest_kernel("R", "", "x + j < W"), "stage(buffers=2)", "buffers=2 stages a top-level loop, not one in a nest" },
  { WINDOW_BACK_APART, "stage()", "its condition t - k >= 0 && t + k < n does not read t and k only as t - k" },
  { TERNARY_READ, "stage()", "A[m * K + k] is read under a condition" },
  { WINDOW_GUARD, "stage()", "the guard says more than the axes' extents" },
  { WINDOW_MASK, "stage(x)", "its condition mask[t + k] reads memory or calls a function" },
  { "nbody", "stage()", "not a compile-time constant" },
  { "elementwise_chain", "stage()", "x is read at one place per point: no neighbour shares it" },
  { NO_EDGE_GUARD, "stage()", "u[i + 1] may read past the edge along i" },
  { "gemv", "stage() split_reduce(warp)", "does not compose" },
  { TRANSPOSE_REPS, "stage()", "nor a tile exchange: a loop in the per-point code" },
  { PERMUTED_ROWS, "stage()", "in[(long)perm[i] * n + j] has an indirect index" },
  { LOWER_TRANSPOSE, "stage()", "in[i * n + j] is read under a condition" },
  { UNGUARDED_TRANSPOSE, "stage()", "the guard gives no bound for i: a partial tile at the edge would run past it" },
  { ATOMIC_TRANSPOSE, "stage()", "an atomic update (out[j * m + i])" },
  { "elementwise_chain", "stage(tile=32,block=32x8)", "x[i] is unit-stride along i, like the store: coalesced already" },
  { "transpose/v0_naive.cu", "stage(tile=32,block=16x8)", "the block's x size 16 is not the tile 32" },
  { "transpose/v0_naive.cu", "stage(tile=32,block=32x6)", "the block's y size 6 does not divide the tile 32" },
  { "transpose/v0_naive.cu", "stage(in) coarsen(2)", "coarsen does not compose" },
}

-- The rest of the checks are static and cheap: make test runs them.
if mode == "rest" then return end

describe("illegal schedules are refused with their reason", function()
  for _, c in ipairs(ILLEGAL) do
    local label = by_name[c[1]] and c[1] or c[1]:match("void (%w+)")
    it(label .. ": " .. c[2], function()
      local text = by_name[c[1]] and by_name[c[1]].text or c[1]
      local out, why = kir.schedule(text, c[2])
      expect(out):is_nil()
      expect(why):contains(c[3])
    end)
  end
end)

describe("sequences", function()
  it("lists legal sequences breadth first, each re-applicable from its text, each primitive once", function()
    local k = assert(kir.lift(by_name.gemv.text))
    local seqs = kir.sequences(k, 2, 100)
    local texts = {}
    for _, s in ipairs(seqs) do
      texts[s.text] = true
      expect(#s.reasons):at_least(1)
      local again = assert(kir.apply(k, s.text))
      expect(assert(kir.emit(again))):equals(assert(kir.emit(s.kernel)))
      local names = {}
      for name in s.text:gmatch("([%a_]+)%(") do
        if names[name] then fail("%s applies %s twice", s.text, name) end
        names[name] = true
      end
    end
    expect(texts["split_reduce(warp) unroll(factor=4,loop=j)"]):is_true()
    expect(texts["stage()"]):is_true()
  end)
end)

describe("candidates", function()
  it("lists only legal applications, each with its reason, and every one emits", function()
    local k = assert(kir.lift(by_name.gemv.text))
    local c = kir.candidates(k)
    expect(#c):at_least(4)
    local names = {}
    for _, x in ipairs(c) do
      names[x.name] = true
      expect(x.reason):matches("^legal: ")
      local applied = assert(kir.apply(k, x.text))
      expect(assert(kir.emit(applied))):contains("void gemv(")
    end
    expect(names.split_reduce):is_true()
    expect(names.coarsen):is_true()
    local none = kir.candidates(assert(kir.lift(by_name.cummax_cols.text)))
    for _, x in ipairs(none) do expect(x.name):never_contains("split_reduce") end
  end)
end)

describe("register_tile keeps dead points from writing", function()
  it("a store before the loop is guarded by the point's bounds, like the stores after it", function()
    local text = [==[
// @kl launch grid(cdiv(N, 16), cdiv(M, 16)) block(16, 16)
extern "C" __global__ void mm_mark(int M, int N, int K, const float *A, const float *B, float *C, int *seen) {
  int n = blockIdx.x * 16 + threadIdx.x;
  int m = blockIdx.y * 16 + threadIdx.y;
  if (m >= M || n >= N) return;
  seen[m * N + n] = 1;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[m * K + k] * B[k * N + n];
  C[m * N + n] = acc;
}
]==]
    local out, log = kir.schedule(text, "register_tile(2,2)")
    if not out then fail("%s", tostring(log)) end
    expect(out):contains("if (m0_ + 16 < M && n0_ + 16 < N) seen[m_1 * N + n_1] = 1;")
    expect(out):contains("if (m0_ + 16 < M && n0_ + 16 < N) C[m_1 * N + n_1] = acc_1_1;")
  end)
end)
