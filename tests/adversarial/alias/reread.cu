// wrong in place (verdict wrong): reads x[row * C] again for every element.
// Out of place that is the same number; in place the first store has made
// it 0, so every later element keeps x instead of x - first.
// @kl launch grid(cdiv(R, 64)) block(64)
extern "C" __global__ void row_minus_first(int R, int C, const float *x, float *y) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= R) return;
  long row = (long)r * C;
  for (int j = 0; j < C; ++j) y[row + j] = x[row + j] - x[row];
}
