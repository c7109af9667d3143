// v6: multiple elements per thread: a fixed grid of GRID_BLOCKS blocks (one full wave on the H200) strides over the array, so each thread sums many elements before the tree and there are only GRID_BLOCKS partials.
// Sums n floats into out[0] in two launches: `reduce` writes one partial sum
// per block to `partial`, then `reduce_finish` (one block) adds the partials.
// Both passes add in a fixed order, so the result is deterministic.
// @kl launch grid(GRID_BLOCKS) block(BLOCK)
// @kl launch(reduce_finish) grid(1) block(FINISH_THREADS)
#define BLOCK 256  // threads per block of the first pass (a power of two)
#define GRID_BLOCKS 1056  // 8 resident blocks of BLOCK threads on each of the H200's 132 SMs
#define FINISH_THREADS 1024

static_assert(BLOCK >= 64 && (BLOCK & (BLOCK - 1)) == 0, "the tree needs a power-of-two block of at least 64");

// The last six steps run inside warp 0 only, without __syncthreads. The
// historical form read and wrote a volatile array with no barrier at all,
// trusting the 32 threads of a warp to run in lockstep; since Volta they are
// scheduled independently, so that form races. __syncwarp after each read
// (before anyone writes) and after each write (before the next read) restores
// the ordering the old code assumed.
__device__ __forceinline__ void warp_reduce(float *sdata, int tid) {
  float v = sdata[tid];
#pragma unroll
  for (int offset = 32; offset > 0; offset >>= 1) {
    v += sdata[tid + offset];
    __syncwarp();
    sdata[tid] = v;
    __syncwarp();
  }
}

extern "C" __global__ void reduce(int n, const float *x, float *partial,
                                  float *out) {
  __shared__ float sdata[BLOCK];
  unsigned tid = threadIdx.x;
  // A fixed grid walks the whole array: each thread adds many elements.
  unsigned stride = 2 * BLOCK * gridDim.x;
  float v = 0.0f;
  for (unsigned i = blockIdx.x * (2 * BLOCK) + tid; i < (unsigned)n; i += stride) {
    v += x[i];
    if (i + BLOCK < (unsigned)n) v += x[i + BLOCK];
  }
  sdata[tid] = v;
  __syncthreads();
#pragma unroll
  for (int s = BLOCK / 2; s > 32; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid < 32) warp_reduce(sdata, tid);
  if (tid == 0) partial[blockIdx.x] = sdata[0];
  (void)out;
}

// Number of partial sums the first pass writes (its grid size).
__device__ __forceinline__ int partial_count(int n) {
  return GRID_BLOCKS;
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
