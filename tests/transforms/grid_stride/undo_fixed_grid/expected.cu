// y = a * x + y over a fixed grid of one wave.
// @kl launch grid(cdiv(n, BLOCK)) block(BLOCK)
#define BLOCK 256

extern "C" __global__ void axpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i >= n) return;
  float v = a * x[i];
  y[i] += v;
}
