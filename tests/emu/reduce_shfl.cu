// Block-wide sum: shuffles within each warp, shared memory across warps.
// One partial sum per block; blocks of any multiple of 32 threads.
#include <cuda_runtime.h>

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

extern "C" __global__ void block_sum(const float *__restrict__ in, float *__restrict__ out, int n) {
  __shared__ float partial[32];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? in[i] : 0.0f;
  v = warp_sum(v);
  int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    int warps = blockDim.x / warpSize;
    v = lane < warps ? partial[lane] : 0.0f;
    v = warp_sum(v);
    if (lane == 0) out[blockIdx.x] = v;
  }
}

// The same sum through __shfl_xor_sync (a butterfly): every lane ends with
// the warp total, so lane 31 can write it.
extern "C" __global__ void warp_sum_xor(const float *in, float *out) {
  float v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
  if (threadIdx.x % 32 == 31) out[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = v;
}
