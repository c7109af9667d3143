// v2: sequential addressing: at step s the first s threads add sdata[tid + s], so active threads are contiguous and a warp's accesses hit 32 different banks.
// Sums n floats into out[0] in two launches: `reduce` writes one partial sum
// per block to `partial`, then `reduce_finish` (one block) adds the partials.
// Both passes add in a fixed order, so the result is deterministic.
// @kl launch grid(cdiv(n, BLOCK)) block(BLOCK)
// @kl launch(reduce_finish) grid(1) block(FINISH_THREADS)
#define BLOCK 256  // threads per block of the first pass (a power of two)
#define FINISH_THREADS 1024

static_assert((BLOCK & (BLOCK - 1)) == 0 && BLOCK >= 32, "the tree needs a power-of-two block");

extern "C" __global__ void reduce(int n, const float *x, float *partial,
                                  float *out) {
  __shared__ float sdata[BLOCK];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = i < (unsigned)n ? x[i] : 0.0f;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) partial[blockIdx.x] = sdata[0];
  (void)out;
}

// Number of partial sums the first pass writes (its grid size).
__device__ __forceinline__ int partial_count(int n) {
  return (n + BLOCK - 1) / BLOCK;
}

extern "C" __global__ void reduce_finish(int n, const float *x, float *partial,
                                         float *out) {
  __shared__ float sdata[FINISH_THREADS];
  int tid = threadIdx.x;
  int parts = partial_count(n);
  float sum = 0.0f;
  for (int i = tid; i < parts; i += FINISH_THREADS) sum += partial[i];
  sdata[tid] = sum;
  __syncthreads();
  for (int s = FINISH_THREADS / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[0] = sdata[0];
  (void)x;
}
