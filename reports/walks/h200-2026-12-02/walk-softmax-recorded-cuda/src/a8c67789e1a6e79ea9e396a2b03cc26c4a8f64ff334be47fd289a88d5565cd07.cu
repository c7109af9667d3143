// v3: online softmax: one pass keeps a running maximum and a sum rescaled whenever the maximum grows, so the row is read twice (statistics, then output) instead of three times.
// y[r][c] = exp(x[r][c] - max_r) / sum_c exp(x[r][c] - max_r), row-major rows x cols.
// @kl launch grid(rows) block(BLOCK)
#define BLOCK 256
#define NEG_BIG (-3.402823466e38f)  // -FLT_MAX: the identity of max for finite inputs

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
  for (int w = 1; w < BLOCK / 32; ++w) r = fmaxf(r, buf[w]);
  __syncthreads();
  return r;
}

__device__ float block_sum(float v, float *buf) {
  v = warp_sum(v);
  if (threadIdx.x % 32 == 0) buf[threadIdx.x / 32] = v;
  __syncthreads();
  float r = buf[0];
  for (int w = 1; w < BLOCK / 32; ++w) r += buf[w];
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

extern "C" __global__ void softmax(int rows, int cols, const float *x,
                                   float *y) {
  __shared__ float buf[BLOCK / 32];
  const float *xr = x + (long)blockIdx.x * cols;
  float *yr = y + (long)blockIdx.x * cols;
  float m = NEG_BIG, d = 0.0f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) online_add(m, d, xr[c]);
  // Rescale each thread's sum to the row maximum; an empty thread has d = 0.
  float row_max = block_max(m, buf);
  float s = block_sum(d * expf(m - row_max), buf);
  for (int c = threadIdx.x; c < cols; c += BLOCK) yr[c] = expf(xr[c] - row_max) / s;
  (void)rows;
}
