// v9: fused statistics: each thread exponentiates against its own maximum and the team combines (max, sum) pairs in a single reduction (sum rescaled by exp(m - M)), halving the barriers and shuffle rounds of the register-cached paths.
// y[r][c] = exp(x[r][c] - max_r) / sum_c exp(x[r][c] - max_r), row-major rows x cols.
// Three paths, chosen from cols inside the kernel (uniform over the grid):
//   cols4 <= 32 * VEC          one warp per row, the row in registers, no barrier;
//   cols4 <= BLOCK * VEC       a group of W warps per row, the row in registers;
//   larger                     the whole block per row, online pass + output pass.
// @kl launch grid(GRID_BLOCKS) block(BLOCK)
// @kl requires cols % 4 == 0
#define BLOCK 1024
#define WARPS (BLOCK / 32)
#define VEC 8                          // float4 of the row each thread keeps in registers
#define MIN_BLOCKS 1                   // resident blocks per SM: 1024 threads, so <= 64 registers each
#define GRID_BLOCKS (132 * MIN_BLOCKS) // one full wave on the H200's 132 SMs
#define NEG_BIG (-3.402823466e38f)     // -FLT_MAX: the identity of max for finite inputs

static_assert(BLOCK * MIN_BLOCKS == 1024, "the register budget assumes 1024 resident threads per SM");
static_assert(BLOCK % 32 == 0 && (WARPS & (WARPS - 1)) == 0, "a power-of-two number of whole warps");

// Butterfly reductions inside a warp: every lane ends with the result.
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Reductions over the `width` warps starting at warp `first` (width divides
// WARPS, groups are aligned); every thread gets its group's result, the
// slots are added in a fixed order, and the trailing barrier frees `buf`.
// Every thread of the block must call them.
__device__ float group_max(float v, float *buf, int first, int width) {
  v = warp_max(v);
  if (threadIdx.x % 32 == 0) buf[threadIdx.x / 32] = v;
  __syncthreads();
  float r = buf[first];
  for (int w = 1; w < width; ++w) r = fmaxf(r, buf[first + w]);
  __syncthreads();
  return r;
}

__device__ float group_sum(float v, float *buf, int first, int width) {
  v = warp_sum(v);
  if (threadIdx.x % 32 == 0) buf[threadIdx.x / 32] = v;
  __syncthreads();
  float r = buf[first];
  for (int w = 1; w < width; ++w) r += buf[first + w];
  __syncthreads();
  return r;
}

// Adds v to a running (max m, sum d of exp(. - m)): one exp per element.
// Merges two (max, sum) statistics: the sums are rescaled to the larger max.
// An empty side has (NEG_BIG, 0) and contributes 0 (exp underflows, no NaN).
__device__ __forceinline__ void merge_stats(float &m, float &s, float m2, float s2) {
  float mx = fmaxf(m, m2);
  s = s * expf(m - mx) + s2 * expf(m2 - mx);
  m = mx;
}

__device__ __forceinline__ void warp_stats(float &m, float &s) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    merge_stats(m, s, __shfl_xor_sync(0xffffffffu, m, offset),
                __shfl_xor_sync(0xffffffffu, s, offset));
}

// (max, sum) over the `width` warps starting at warp `first`: each warp
// merges its group's slots with a butterfly over its first `width` lanes
// (log2(width) levels, not a serial chain of width - 1 merges), then lane
// 0's result is broadcast. Trailing barrier frees `buf` (2 * WARPS floats).
__device__ void group_stats(float &m, float &s, float *buf, int first, int width) {
  warp_stats(m, s);
  int lane = threadIdx.x % 32;
  if (lane == 0) {
    buf[threadIdx.x / 32] = m;
    buf[WARPS + threadIdx.x / 32] = s;
  }
  __syncthreads();
  m = lane < width ? buf[first + lane] : NEG_BIG;
  s = lane < width ? buf[WARPS + first + lane] : 0.0f;
  for (int offset = width / 2; offset > 0; offset >>= 1)
    merge_stats(m, s, __shfl_xor_sync(0xffffffffu, m, offset),
                __shfl_xor_sync(0xffffffffu, s, offset));
  m = __shfl_sync(0xffffffffu, m, 0);
  s = __shfl_sync(0xffffffffu, s, 0);
  __syncthreads();
}

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

// One row held in registers by a team of `team` threads (this thread is
// number g): a single read, a single write. width == 0 means the team is
// one warp and reduces by shuffles alone. A thread with active == false
// still takes part in the reductions.
__device__ __forceinline__ void cached_row(const float4 *xr4, float4 *yr4,
                                          int cols4, int g, int team,
                                          bool active, float *buf, int first,
                                          int width) {
  float4 v[VEC];
  int nv = active ? (cols4 - g + team - 1) / team : 0;  // how many of v[] this thread owns
  // All loads first, so VEC independent 16-byte loads are in flight.
#pragma unroll
  for (int j = 0; j < VEC; ++j)
    if (j < nv) v[j] = xr4[g + j * team];
  float m = NEG_BIG;
#pragma unroll
  for (int j = 0; j < VEC; ++j)
    if (j < nv) m = fmaxf(m, max4(v[j]));
  m = width == 0 ? warp_max(m) : group_max(m, buf, first, width);
  // Exponentiate against this thread's own maximum, then one reduction of
  // (max, sum) pairs gives the row's max M and sum S.
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
  float row_max = m, row_sum = s;
  if (width == 0)
    warp_stats(row_max, row_sum);
  else
    group_stats(row_max, row_sum, buf, first, width);
  float scale = expf(m - row_max) / row_sum;  // exp(x - m) * scale = exp(x - M) / S
#pragma unroll
  for (int j = 0; j < VEC; ++j)
    if (j < nv)
      yr4[g + j * team] = make_float4(v[j].x * scale, v[j].y * scale, v[j].z * scale, v[j].w * scale);
}

extern "C" __global__ void __launch_bounds__(BLOCK, MIN_BLOCKS)
softmax(int rows, int cols, const float *x, float *y) {
  __shared__ float buf[2 * WARPS];
  int cols4 = cols >> 2;  // cols % 4 == 0 keeps every row start 16-byte aligned
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  if (cols4 <= 32 * VEC) {
    // One warp per row; warps walk the rows independently.
    for (int r = blockIdx.x * WARPS + warp; r < rows; r += gridDim.x * WARPS)
      cached_row(reinterpret_cast<const float4 *>(x + (long)r * cols),
                 reinterpret_cast<float4 *>(y + (long)r * cols), cols4, lane,
                 32, true, buf, 0, 0);
    return;
  }

  if (cols4 <= BLOCK * VEC) {
    // A group of `width` warps per row, WARPS / width rows per block step.
    int width = 2;
    while (width * 32 * VEC < cols4) width *= 2;
    int per_block = WARPS / width;
    int group = warp / width;
    int g = threadIdx.x % (width * 32);
    for (int base = blockIdx.x * per_block; base < rows; base += gridDim.x * per_block) {
      int r = base + group;
      bool active = r < rows;
      long offset = active ? (long)r * cols : 0;
      cached_row(reinterpret_cast<const float4 *>(x + offset),
                 reinterpret_cast<float4 *>(y + offset), cols4, g, width * 32,
                 active, buf, group * width, width);
    }
    return;
  }

  // The row does not fit in the block's registers: read it twice.
  for (int r = blockIdx.x; r < rows; r += gridDim.x) {
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
    float row_max = group_max(m, buf, 0, WARPS);
    float s = group_sum(d * expf(m - row_max), buf, 0, WARPS);
    for (int c = threadIdx.x; c < cols4; c += BLOCK) {
      float4 q = xr4[c];
      yr4[c] = make_float4(expf(q.x - row_max) / s, expf(q.y - row_max) / s,
                           expf(q.z - row_max) / s, expf(q.w - row_max) / s);
    }
  }
}
