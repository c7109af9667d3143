// v5: register caching: when the row fits (cols4 <= BLOCK * VEC) each thread keeps its VEC float4 of the row in registers, so the row is read from global memory once instead of twice; longer rows keep the two-pass path.
// y[r][c] = exp(x[r][c] - max_r) / sum_c exp(x[r][c] - max_r), row-major rows x cols.
// Two paths, chosen from cols inside the kernel (uniform over the grid):
//   cols4 <= BLOCK * VEC       the block holds the row in registers;
//   larger                     online pass + output pass over global memory.
// @kl launch grid(rows) block(BLOCK)
// @kl requires cols % 4 == 0
#define BLOCK 256
#define WARPS (BLOCK / 32)
#define VEC 8                          // float4 of the row each thread keeps in registers
#define MIN_BLOCKS 4                   // resident blocks per SM: 1024 threads, so <= 64 registers each
#define NEG_BIG (-3.402823466e38f)     // -FLT_MAX: the identity of max for finite inputs

static_assert(BLOCK * MIN_BLOCKS == 1024, "the register budget assumes 1024 resident threads per SM");
static_assert(BLOCK % 32 == 0, "whole warps only");

// Butterfly reductions inside a warp: every lane ends with the result.
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Block reductions: warp results go through one shared slot per warp, and
// every thread adds the slots in the same order (deterministic). The
// trailing barrier lets the next reduction reuse `buf`.
__device__ float block_max(float v, float *buf) {
  v = warp_max(v);
  if (threadIdx.x % 32 == 0) buf[threadIdx.x / 32] = v;
  __syncthreads();
  float r = buf[0];
  for (int w = 1; w < WARPS; ++w) r = fmaxf(r, buf[w]);
  __syncthreads();
  return r;
}

__device__ float block_sum(float v, float *buf) {
  v = warp_sum(v);
  if (threadIdx.x % 32 == 0) buf[threadIdx.x / 32] = v;
  __syncthreads();
  float r = buf[0];
  for (int w = 1; w < WARPS; ++w) r += buf[w];
  __syncthreads();
  return r;
}

// Adds v to a running (max m, sum d of exp(. - m)): one exp per element.
__device__ __forceinline__ void online_add(float &m, float &d, float v) {
  if (v > m) {
    d = d * expf(m - v) + 1.0f;
    m = v;
  } else {
    d += expf(v - m);
  }
}

__device__ __forceinline__ float max4(float4 q) {
  return fmaxf(fmaxf(q.x, q.y), fmaxf(q.z, q.w));
}

// One row held in registers by the block: a single read, a single write.
__device__ __forceinline__ void cached_row(const float4 *xr4, float4 *yr4,
                                          int cols4, float *buf) {
  float4 v[VEC];
  int g = threadIdx.x;
  int nv = (cols4 - g + BLOCK - 1) / BLOCK;  // how many of v[] this thread owns
  // All loads first, so VEC independent 16-byte loads are in flight.
#pragma unroll
  for (int j = 0; j < VEC; ++j)
    if (j < nv) v[j] = xr4[g + j * BLOCK];
  float m = NEG_BIG;
#pragma unroll
  for (int j = 0; j < VEC; ++j)
    if (j < nv) m = fmaxf(m, max4(v[j]));
  m = block_max(m, buf);
  float s = 0.0f;
#pragma unroll
  for (int j = 0; j < VEC; ++j)
    if (j < nv) {
      v[j].x = expf(v[j].x - m);
      v[j].y = expf(v[j].y - m);
      v[j].z = expf(v[j].z - m);
      v[j].w = expf(v[j].w - m);
      s += (v[j].x + v[j].y) + (v[j].z + v[j].w);
    }
  s = block_sum(s, buf);
#pragma unroll
  for (int j = 0; j < VEC; ++j)
    if (j < nv)
      yr4[g + j * BLOCK] = make_float4(v[j].x / s, v[j].y / s, v[j].z / s, v[j].w / s);
}

extern "C" __global__ void __launch_bounds__(BLOCK, MIN_BLOCKS)
softmax(int rows, int cols, const float *x, float *y) {
  (void)rows;
  __shared__ float buf[WARPS];
  int cols4 = cols >> 2;  // cols % 4 == 0 keeps every row start 16-byte aligned
  if (cols4 <= BLOCK * VEC) {
    cached_row(reinterpret_cast<const float4 *>(x + (long)blockIdx.x * cols),
               reinterpret_cast<float4 *>(y + (long)blockIdx.x * cols), cols4, buf);
    return;
  }

  // The row does not fit in the block's registers: read it twice.
  {
    int r = blockIdx.x;
    const float4 *xr4 = reinterpret_cast<const float4 *>(x + (long)r * cols);
    float4 *yr4 = reinterpret_cast<float4 *>(y + (long)r * cols);
    float m = NEG_BIG, d = 0.0f;
    for (int c = threadIdx.x; c < cols4; c += BLOCK) {
      float4 q = xr4[c];
      online_add(m, d, q.x);
      online_add(m, d, q.y);
      online_add(m, d, q.z);
      online_add(m, d, q.w);
    }
    float row_max = block_max(m, buf);
    float s = block_sum(d * expf(m - row_max), buf);
    for (int c = threadIdx.x; c < cols4; c += BLOCK) {
      float4 q = xr4[c];
      yr4[c] = make_float4(expf(q.x - row_max) / s, expf(q.y - row_max) / s,
                           expf(q.z - row_max) / s, expf(q.w - row_max) / s);
    }
  }
}
