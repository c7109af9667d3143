// One sum per block of 512 threads.
// @kl launch grid(cdiv(n, WIDTH)) block(WIDTH)
#define WIDTH 512

static_assert(WIDTH >= 64 && (WIDTH & (WIDTH - 1)) == 0, "the tree needs a power-of-two block of at least 64");

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

extern "C" __global__ void block_sums(int n, const float *x, float *sums) {
  __shared__ float part[WIDTH];
  int tid = threadIdx.x;
  int i = blockIdx.x * WIDTH + tid;
  part[tid] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s) part[tid] += part[tid + s];
    __syncthreads();
  }
  if (tid < 32) warp_reduce(part, tid);
  if (tid == 0) sums[blockIdx.x] = part[0];
}
