// One sum per block of 128 threads; blocks past the end leave 0.
// @kl launch grid(cdiv(n, THREADS)) block(THREADS)
#define THREADS 128

extern "C" __global__ void block_sums(int n, const float *x, float *sums) {
  __shared__ float part[THREADS];
  unsigned tid = threadIdx.x;
  int back = (int)tid - 1;  // signed: its compare keeps the builtin
  unsigned i = blockIdx.x * blockDim.x + tid;
  part[tid] = i < (unsigned)n && back < (int)blockDim.x ? x[i] : 0.0f;
  __syncthreads();
  // The tree halves blockDim.x each step.
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) part[tid] += part[tid + s];
    __syncthreads();
  }
  if (tid == 0) sums[blockIdx.x] = part[0];
}
