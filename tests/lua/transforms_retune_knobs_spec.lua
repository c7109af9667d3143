-- retune changes tuning knobs only (transforms/lib/knobs.lua): never a
-- problem size, the warp size, a wmma fragment's shape, or a block size
-- the launch writes as literals. Each kernel is written the way users
-- write them; the knob beside the impostor stays retunable.
local transforms = require "klineage.transforms"

local function sites(src)
  local out = {}
  for _, s in ipairs(transforms.sites(src, { names = { "retune" } })) do
    out[s.define] = out[s.define] or {}
    out[s.define][s.direction] = s
  end
  return out
end

local PROBLEM_SIZE = [[
#define N 512
#define BLOCK 128
// @kl launch grid(cdiv(N, BLOCK)) block(BLOCK)
extern "C" __global__ void add_one(const float *x, float *y) {
  __shared__ float stage[BLOCK];
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < N) stage[threadIdx.x] = x[i];
  __syncthreads();
  if (i < N) y[i] = stage[threadIdx.x] + 1.0f;
}
]]

local HOST_SIZE = [[
#define SIZE 256
#define TILE 64
// @kl launch grid(1) block(TILE)
extern "C" __global__ void reverse(const float *x, float *y) {
  __shared__ float buf[SIZE];
  for (int k = threadIdx.x; k < SIZE; k += TILE) buf[k] = x[k];
  __syncthreads();
  for (int k = threadIdx.x; k < SIZE; k += TILE) y[k] = buf[SIZE - 1 - k];
}
int main() {
  float *x, *y;
  cudaMalloc(&x, SIZE * sizeof(float));
  cudaMalloc(&y, SIZE * sizeof(float));
  reverse<<<1, TILE>>>(x, y);
  return 0;
}
]]

local WARP = [[
#define WARP_SIZE 32
#define BLOCK 256
// @kl launch grid(cdiv(n, BLOCK)) block(BLOCK)
extern "C" __global__ void block_sum(int n, const float *x, float *out) {
  __shared__ float partial[BLOCK / WARP_SIZE];
  int i = blockIdx.x * BLOCK + threadIdx.x;
  int lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE;
  float v = i < n ? x[i] : 0.0f;
  for (int off = WARP_SIZE / 2; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.0f;
    for (int w = 0; w < BLOCK / WARP_SIZE; ++w) s += partial[w];
    atomicAdd(out, s);
  }
}
]]

-- the warp size under another name: only its uses give it away
local WARP_UNNAMED = [[
#define W 32
#define BLOCK 256
// @kl launch grid(cdiv(n, BLOCK)) block(BLOCK)
extern "C" __global__ void row_max(int n, const float *x, float *out) {
  __shared__ float best[BLOCK / W];
  int i = blockIdx.x * BLOCK + threadIdx.x;
  float v = i < n ? x[i] : -1e30f;
  for (int off = 16; off > 0; off /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off, W));
  if (threadIdx.x % W == 0) best[threadIdx.x / W] = v;
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = best[0];
}
]]

local WMMA = [[
#include <mma.h>
using namespace nvcuda;
#define WMMA_M 16
#define WMMA_N 16
#define WMMA_K 16
#define WARPS 4
// @kl launch grid(cdiv(N, WMMA_N), cdiv(M, WMMA_M * WARPS)) block(32 * WARPS)
extern "C" __global__ void hgemm(int M, int N, int K, const half *A, const half *B, float *C) {
  int warp = threadIdx.x / 32;
  int row = (blockIdx.y * WARPS + warp) * WMMA_M, col = blockIdx.x * WMMA_N;
  wmma::fragment<wmma::matrix_a, WMMA_M, WMMA_N, WMMA_K, half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, WMMA_M, WMMA_N, WMMA_K, half, wmma::row_major> b;
  wmma::fragment<wmma::accumulator, WMMA_M, WMMA_N, WMMA_K, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  for (int k = 0; k < K; k += WMMA_K) {
    wmma::load_matrix_sync(a, A + row * K + k, K);
    wmma::load_matrix_sync(b, B + k * N + col, N);
    wmma::mma_sync(acc, a, b, acc);
  }
  wmma::store_matrix_sync(C + row * N + col, acc, N, wmma::mem_row_major);
}
]]

local LITERAL_BLOCK = [[
#define BLOCK_SIZE 16
// @kl launch grid(cdiv(N, 16), cdiv(M, 16)) block(16, 16)
extern "C" __global__ void matmul(int M, int N, int K, const float *A, const float *B, float *C) {
  __shared__ float As[BLOCK_SIZE][BLOCK_SIZE];
  __shared__ float Bs[BLOCK_SIZE][BLOCK_SIZE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * BLOCK_SIZE + ty, col = blockIdx.x * BLOCK_SIZE + tx;
  float acc = 0.0f;
  for (int t = 0; t < K; t += BLOCK_SIZE) {
    As[ty][tx] = row < M && t + tx < K ? A[row * K + t + tx] : 0.0f;
    Bs[ty][tx] = col < N && t + ty < K ? B[(t + ty) * N + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < BLOCK_SIZE; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}
]]

-- the annotation follows the define, but the host launches with numbers
local HOST_LITERAL = LITERAL_BLOCK:gsub("grid%(cdiv%(N, 16%), cdiv%(M, 16%)%) block%(16, 16%)",
  "grid(cdiv(N, BLOCK_SIZE), cdiv(M, BLOCK_SIZE)) block(BLOCK_SIZE, BLOCK_SIZE)") .. [[
void launch(int M, int N, int K, const float *A, const float *B, float *C) {
  dim3 grid((N + 15) / 16, (M + 15) / 16);
  matmul<<<grid, dim3(16, 16)>>>(M, N, K, A, B, C);
}
]]

describe("retune: only tuning knobs", function()
  it("leaves a problem size alone, and retunes the block beside it", function()
    local s = sites(PROBLEM_SIZE)
    expect(s.N):is_nil()
    expect(s.BLOCK and s.BLOCK.apply ~= nil):is_true()
  end)
  it("leaves a size the host program allocates alone", function()
    local s = sites(HOST_SIZE)
    expect(s.SIZE):is_nil()
    expect(s.TILE and s.TILE.apply ~= nil):is_true()
  end)
  it("leaves WARP_SIZE alone (halved, BLOCK / WARP_SIZE / 16 would divide by zero elsewhere)", function()
    local s = sites(WARP)
    expect(s.WARP_SIZE):is_nil()
    expect(s.BLOCK and s.BLOCK.apply ~= nil):is_true()
  end)
  it("leaves the warp size alone under another name, by its uses", function()
    expect(sites(WARP_UNNAMED).W):is_nil()
  end)
  it("leaves wmma fragment shapes alone", function()
    local s = sites(WMMA)
    expect(s.WMMA_M):is_nil()
    expect(s.WMMA_N):is_nil()
    expect(s.WMMA_K):is_nil()
  end)
  it("leaves a BLOCK_SIZE alone whose @kl launch writes the block as literals", function()
    expect(sites(LITERAL_BLOCK).BLOCK_SIZE):is_nil()
    -- the same kernel with the launch written over the define is a knob
    local over = LITERAL_BLOCK:gsub("grid%(cdiv%(N, 16%), cdiv%(M, 16%)%) block%(16, 16%)",
      "grid(cdiv(N, BLOCK_SIZE), cdiv(M, BLOCK_SIZE)) block(BLOCK_SIZE, BLOCK_SIZE)")
    local s = sites(over)
    expect(s.BLOCK_SIZE and s.BLOCK_SIZE.apply ~= nil):is_true()
    expect(s.BLOCK_SIZE.apply.check):contains("BLOCK_SIZE reaches the launch")
    expect(s.BLOCK_SIZE.apply.check):contains("no problem size, hardware constant (the warp size) or wmma/mma fragment shape depends on it")
  end)
  it("leaves it alone when the host launches with numbers", function()
    expect(sites(HOST_LITERAL).BLOCK_SIZE):is_nil()
  end)
end)
