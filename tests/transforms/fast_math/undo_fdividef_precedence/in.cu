// Reverting __fdividef where the quotient sits inside a product and has
// a sum for its denominator: both need parentheses to keep the order.
// @kl launch grid(cdiv(n, 256)) block(256)
__device__ float blend(float a, float b, float w) {
  return w * __fdividef(a, b + 1.0f) + __fdividef(a - b, w);
}
extern "C" __global__ void mix(int n, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = blend(x[i], 2.0f, 0.5f);
}
