// Cumulative maximum down each column of a rows x cols matrix (row-major):
// y[r][c] = max(x[0][c], ..., x[r][c]), as torch.cummax(x, 0).values.
// Naive: one thread per column carrying its running maximum down the rows
// (a warp's loads and stores coalesce, but only `cols` threads run, each a
// serial chain of rows).
// @kl launch grid(cdiv(cols, 128)) block(128)

extern "C" __global__ void cummax_cols(int rows, int cols, const float *x, float *y) {
  int col = blockIdx.x * 128 + threadIdx.x;
  if (col >= cols) return;
  float run = x[col];
  y[col] = run;
  for (int row = 1; row < rows; ++row) {
    size_t at = (size_t)row * cols + col;
    run = fmaxf(run, x[at]);
    y[at] = run;
  }
}
