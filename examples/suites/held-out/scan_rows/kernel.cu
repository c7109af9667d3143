// Inclusive scan of each row: y[r][c] = x[r][0] + ... + x[r][c]. Naive: one
// thread per output summing its whole prefix from global memory, so the
// work grows with the square of the row length and nothing is reused.
// @kl launch grid(cdiv(rows * cols, BLOCK)) block(BLOCK)
#define BLOCK 256

extern "C" __global__ void scan_rows(int rows, int cols, const float *x, float *y) {
  long t = (long)blockIdx.x * BLOCK + threadIdx.x;
  if (t >= (long)rows * cols) return;
  int c = (int)(t % cols);
  const float *row = x + (t - c);
  float sum = 0.0f;
  for (int k = 0; k <= c; ++k) sum += row[k];
  y[t] = sum;
}
