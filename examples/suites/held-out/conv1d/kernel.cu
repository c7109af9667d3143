// y[r][t] = sum over k in [-R, R] of w[k + R] * x[r][t + k], zero padded.
// Naive: one thread per output from a flat index, every tap read from
// global memory (neighbouring threads load the same inputs again).
// @kl launch grid(cdiv(rows * len, BLOCK)) block(BLOCK)
#define BLOCK 256

extern "C" __global__ void conv1d(int rows, int len, int R, const float *x, const float *w, float *y) {
  long i = (long)blockIdx.x * BLOCK + threadIdx.x;
  if (i >= (long)rows * len) return;
  int t = (int)(i % len);
  const float *signal = x + (i - t);
  float sum = 0.0f;
  for (int k = -R; k <= R; ++k) {
    int at = t + k;
    if (at >= 0 && at < len) sum += w[k + R] * signal[at];
  }
  y[i] = sum;
}
