// RMS normalization of each row of a rows x cols matrix (row-major):
// y[r][c] = x[r][c] / sqrt(mean over the row of x^2 + eps) * weight[c].
// Naive: one thread per output element on a 2D grid (the row on
// blockIdx.y), and every thread sums its row's squares again from global
// memory: cols times the work of one pass.
// @kl launch grid(cdiv(cols, TX), rows) block(TX)
#define TX 128

extern "C" __global__ void rmsnorm(int rows, int cols, float eps, const float *x, const float *weight, float *y) {
  int c = blockIdx.x * TX + threadIdx.x;
  int r = blockIdx.y;
  if (c >= cols) return;
  const float *row = x + (long)r * cols;
  float ss = 0.0f;
  for (int k = 0; k < cols; ++k) ss += row[k] * row[k];
  float rms = sqrtf(ss / cols + eps);
  y[(long)r * cols + c] = row[c] / rms * weight[c];
}
