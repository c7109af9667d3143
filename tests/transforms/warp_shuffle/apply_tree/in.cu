// One sum per block; the kernel's own tree.
// @kl launch grid(cdiv(n, THREADS)) block(THREADS)
#define THREADS 128

extern "C" __global__ void block_sums(int n, const float *x, float *sums) {
  __shared__ float acc[THREADS];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * THREADS + tid;
  float v = i < (unsigned)n ? x[i] : 0.0f;
  acc[tid] = v;
  __syncthreads();
  for (unsigned s = THREADS / 2; s > 0; s >>= 1) {
    if (tid < s) acc[tid] += acc[tid + s];
    __syncthreads();
  }
  if (tid == 0) sums[blockIdx.x] = acc[0];
}
