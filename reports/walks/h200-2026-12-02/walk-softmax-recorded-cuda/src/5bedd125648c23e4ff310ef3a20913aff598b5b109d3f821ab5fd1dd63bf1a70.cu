// v4: vectorized access: the row is read and written as float4, four elements per 16-byte access, which needs cols % 4 == 0.
// y[r][c] = exp(x[r][c] - max_r) / sum_c exp(x[r][c] - max_r), row-major rows x cols.
// @kl launch grid(rows) block(BLOCK)
// @kl requires cols % 4 == 0
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
  // cols % 4 == 0 keeps every row start 16-byte aligned.
  const float4 *xr4 = reinterpret_cast<const float4 *>(xr);
  float4 *yr4 = reinterpret_cast<float4 *>(yr);
  int cols4 = cols >> 2;
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
  (void)rows;
}
