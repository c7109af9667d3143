// idx[r] = the first c with x[r][c] the maximum of row r. Naive: one
// thread per row scanning it serially, so a warp's loads are 32 rows apart
// and only `rows` threads run.
// @kl launch grid(cdiv(rows, BLOCK)) block(BLOCK)
#define BLOCK 128

extern "C" __global__ void row_argmax(int rows, int cols, const float *x, int *idx) {
  int r = blockIdx.x * BLOCK + threadIdx.x;
  if (r >= rows) return;
  const float *row = x + (long)r * cols;
  int best = 0;
  for (int c = 1; c < cols; ++c)
    if (row[c] > row[best]) best = c;
  idx[r] = best;
}
