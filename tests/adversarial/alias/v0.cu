// y = x - x[row * C], one thread a row. The first element is read before
// any store, so y may be x itself.
// @kl launch grid(cdiv(R, 64)) block(64)
extern "C" __global__ void row_minus_first(int R, int C, const float *x, float *y) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= R) return;
  long row = (long)r * C;
  float first = x[row];
  for (int j = 0; j < C; ++j) y[row + j] = x[row + j] - first;
}
