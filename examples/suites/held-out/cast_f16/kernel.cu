// Scale, clamp and store in half precision: y[i] = half(clamp(x[i] * scale,
// lo, hi)), rounded to nearest even, as an activation is written out in
// fp16. Naive: one thread per element, 32-bit unsigned indices, one float
// loaded and one half stored per thread (two bytes: a warp stores 64).
// @kl launch grid(cdiv(n, 512)) block(512)
#include <cuda_fp16.h>

extern "C" __global__ void cast_f16(unsigned n, float scale, float lo, float hi, const float *x, __half *y) {
  unsigned i = blockIdx.x * 512u + threadIdx.x;
  if (i >= n) return;
  float v = x[i] * scale;
  v = fminf(fmaxf(v, lo), hi);
  y[i] = __float2half_rn(v);
}
