// v8: warp shuffles: the block tree in shared memory is replaced by __shfl_down_sync sums inside each warp plus one shared slot per warp, leaving a single __syncthreads.
// Sums n floats into out[0] in two launches: `reduce` writes one partial sum
// per block to `partial`, then `reduce_finish` (one block) adds the partials.
// Both passes add in a fixed order, so the result is deterministic.
// @kl launch grid(GRID_BLOCKS) block(BLOCK)
// @kl launch(reduce_finish) grid(1) block(FINISH_THREADS)
#define BLOCK 256  // threads per block of the first pass (a power of two)
#define GRID_BLOCKS 1056  // 8 resident blocks of BLOCK threads on each of the H200's 132 SMs
#define FINISH_THREADS 1024

static_assert((BLOCK & (BLOCK - 1)) == 0 && BLOCK >= 32, "the tree needs a power-of-two block");

extern "C" __global__ void reduce(int n, const float *x, float *partial,
                                  float *out) {
  __shared__ float sdata[BLOCK];
  unsigned tid = threadIdx.x;
  // 16-byte loads over the first 4 * (n / 4) elements (cuMemAlloc aligns x).
  const float4 *x4 = reinterpret_cast<const float4 *>(x);
  unsigned n4 = (unsigned)n >> 2;
  unsigned stride = BLOCK * gridDim.x;
  float v = 0.0f;
  for (unsigned i = blockIdx.x * BLOCK + tid; i < n4; i += stride) {
    float4 q = x4[i];
    v += (q.x + q.y) + (q.z + q.w);
  }
  // The n % 4 trailing elements go to the first threads of block 0.
  if (blockIdx.x == 0 && tid < ((unsigned)n & 3u)) v += x[(n4 << 2) + tid];
  sdata[tid] = v;
  __syncthreads();
#pragma unroll
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
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
