// Declarations the lowering must rewrite, and text it must leave alone.
#include <cuda_runtime.h>
#include <stdint.h>
#define N 8
__device__ __shared__ int file_scope_counter;
extern __align__(16) __shared__ unsigned char file_scope_dynamic[];
struct Pair {
  float a;
  int b;
};
__device__ __forceinline__ float twice(float x) { return 2.0f * x; }
template <typename T> __device__ T tsum(T a, T b) { return a + b; }

extern "C" __global__ void __launch_bounds__(64, 2) declarations(float *out, Pair p, const int *__restrict__ idx) {
  volatile __shared__ float vs[N];
  static __shared__ float ss[N], tt[N];
  __shared__ __align__(16) float al[N];
  extern __shared__ float dyn[];
  int t = threadIdx.x;
  vs[t % N] = t;
  ss[t % N] = 1;
  tt[t % N] = 2;
  al[t % N] = 3;
  dyn[t] = 4;
  if (t == 0) file_scope_counter = 0;
  __syncthreads();
  atomicAdd(&file_scope_counter, 1);
  __syncthreads();
  // dyn and file_scope_dynamic alias the same dynamic shared memory
  float alias = reinterpret_cast<float *>(file_scope_dynamic)[(t + 1) % blockDim.x];
  out[t] = twice(p.a) + p.b + tsum<float>(ss[0], tt[0]) + al[0] + dyn[(t + 1) % blockDim.x] + alias +
           idx[0] + (float)file_scope_counter + sizeof(ss) / sizeof(float);
  const char *s = "__shared__ asm <<< in a string";
  (void)s;
  // asm("in a comment"), __shared__ float nope[4];
}

// A 16-byte vector passed by value, read with aligned loads.
extern "C" __global__ void by_value(float4 v, double2 d, float *out) {
  out[threadIdx.x] = v.x + v.y + v.z + v.w + (float)(d.x * d.y);
}
