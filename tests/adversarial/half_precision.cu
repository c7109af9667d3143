// expect: wrong. The arithmetic is done in fp16.
#include <cuda_fp16.h>
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __half2float(__hadd(__hmul(__float2half(a), __float2half(x[i])), __float2half(y[i])));
}
