// Layer normalization per row: mean, biased variance (two passes), then
// y = (x - mean) * rsqrt(var + eps) * gamma + beta. Naive: one thread per
// row doing all three passes over it, so a warp's loads are 32 rows apart
// and only `rows` threads run.
// @kl launch grid(cdiv(rows, BLOCK)) block(BLOCK)
#define BLOCK 128

extern "C" __global__ void layernorm(int rows, int cols, float eps, const float *x, const float *gamma,
                                     const float *beta, float *y) {
  int r = blockIdx.x * BLOCK + threadIdx.x;
  if (r >= rows) return;
  const float *row = x + (long)r * cols;
  float sum = 0.0f;
  for (int c = 0; c < cols; ++c) sum += row[c];
  float mean = sum / cols;
  float sq = 0.0f;
  for (int c = 0; c < cols; ++c) {
    float d = row[c] - mean;
    sq += d * d;
  }
  float inv = rsqrtf(sq / cols + eps);
  for (int c = 0; c < cols; ++c) y[(long)r * cols + c] = (row[c] - mean) * inv * gamma[c] + beta[c];
}
