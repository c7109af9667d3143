// v1: one block per row: the BLOCK threads stride through the row together (coalesced loads) and combine their maxima and sums with a shared-memory tree.
// y[r][c] = exp(x[r][c] - max_r) / sum_c exp(x[r][c] - max_r), row-major rows x cols.
// @kl launch grid(rows) block(BLOCK)
#define BLOCK 256
#define NEG_BIG (-3.402823466e38f)  // -FLT_MAX: the identity of max for finite inputs

static_assert((BLOCK & (BLOCK - 1)) == 0, "the tree needs a power-of-two block");

// Tree reductions over the block; every thread gets the result. The leading
// barrier keeps a new reduction from overwriting `buf` while it is still read.
__device__ float block_max(float v, float *buf) {
  int tid = threadIdx.x;
  __syncthreads();
  buf[tid] = v;
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (tid < s) buf[tid] = fmaxf(buf[tid], buf[tid + s]);
    __syncthreads();
  }
  return buf[0];
}

__device__ float block_sum(float v, float *buf) {
  int tid = threadIdx.x;
  __syncthreads();
  buf[tid] = v;
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (tid < s) buf[tid] += buf[tid + s];
    __syncthreads();
  }
  return buf[0];
}

extern "C" __global__ void softmax(int rows, int cols, const float *x,
                                   float *y) {
  __shared__ float buf[BLOCK];
  const float *xr = x + (long)blockIdx.x * cols;
  float *yr = y + (long)blockIdx.x * cols;
  float m = NEG_BIG;
  for (int c = threadIdx.x; c < cols; c += BLOCK) m = fmaxf(m, xr[c]);
  m = block_max(m, buf);
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) s += expf(xr[c] - m);
  s = block_sum(s, buf);
  for (int c = threadIdx.x; c < cols; c += BLOCK) yr[c] = expf(xr[c] - m) / s;
  (void)rows;
}
