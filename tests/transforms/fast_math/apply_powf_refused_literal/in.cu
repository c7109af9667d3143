// powf with an integral literal exponent is not offered (a negative base
// is fine for powf, NaN for __powf); the other powf is, with sinf.
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void wave(int n, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = powf(x[i], 3.0f) + powf(fabsf(x[i]) + 1.0f, 0.37f) * sinf(x[i]);
}
