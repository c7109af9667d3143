// One sum per block; the kernel's own tree.
// @kl launch grid(cdiv(n, THREADS)) block(THREADS)
#define THREADS 128

// Tree sum across the 32 lanes of a warp; lane 0 ends with the total.
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

extern "C" __global__ void block_sums(int n, const float *x, float *sums) {
  __shared__ float warp_sums[THREADS / 32];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * THREADS + tid;
  float v = i < (unsigned)n ? x[i] : 0.0f;
  // Warp sums by shuffles, one shared slot per warp, then warp 0 adds those.
  v = warp_sum(v);
  if (tid % 32 == 0) warp_sums[tid / 32] = v;
  __syncthreads();
  if (tid < 32) {
    v = tid < THREADS / 32 ? warp_sums[tid] : 0.0f;
    v = warp_sum(v);
    if (tid == 0) sums[blockIdx.x] = v;
  }
}
