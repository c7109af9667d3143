// The largest magnitude in each column of a rows x cols matrix (row-major),
// amax[c] = max over r of |x[r][c]|, as per-channel quantization scales are
// found. Naive: one thread per column walking down every row (a warp's
// loads coalesce, but only `cols` threads run, each a serial chain).
// @kl launch grid(cdiv(cols, BLOCK_X)) block(BLOCK_X)
#define BLOCK_X 128

extern "C" __global__ void colabsmax(int rows, int cols, const float *x, float *amax) {
  int c = blockIdx.x * BLOCK_X + threadIdx.x;
  if (c >= cols) return;
  float m = 0.0f;
  for (int r = 0; r < rows; ++r) m = fmaxf(m, fabsf(x[(long long)r * cols + c]));
  amax[c] = m;
}
