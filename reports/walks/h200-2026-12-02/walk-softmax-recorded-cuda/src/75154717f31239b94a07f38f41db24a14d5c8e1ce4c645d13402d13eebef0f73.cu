// v0: the naive baseline: one thread per row makes three passes over its row (max, sum of exponentials, normalize), so a warp's 32 loads are 32 rows apart.
// y[r][c] = exp(x[r][c] - max_r) / sum_c exp(x[r][c] - max_r), row-major rows x cols.
// @kl launch grid(cdiv(rows, BLOCK)) block(BLOCK)
#define BLOCK 256
#define NEG_BIG (-3.402823466e38f)  // -FLT_MAX: the identity of max for finite inputs

extern "C" __global__ void softmax(int rows, int cols, const float *x,
                                   float *y) {
  int r = blockIdx.x * BLOCK + threadIdx.x;
  if (r >= rows) return;
  const float *xr = x + (long)r * cols;
  float *yr = y + (long)r * cols;
  float m = NEG_BIG;
  for (int c = 0; c < cols; ++c) m = fmaxf(m, xr[c]);
  float s = 0.0f;
  for (int c = 0; c < cols; ++c) s += expf(xr[c] - m);
  for (int c = 0; c < cols; ++c) yr[c] = expf(xr[c] - m) / s;
}
