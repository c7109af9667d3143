// The C reference of batchnorm_infer: each element normalized with its
// channel's statistics, in double.
#include <math.h>

void reference(int N, int C, int H, int W, float eps, const float *x, const float *mean,
               const float *var, const float *gamma, const float *beta, float *y) {
  long plane = (long)H * W;
  for (long n = 0; n < N; ++n)
    for (int c = 0; c < C; ++c) {
      double inv = 1.0 / sqrt((double)var[c] + eps);
      for (long p = 0; p < plane; ++p) {
        long i = (n * C + c) * plane + p;
        y[i] = (float)(((double)x[i] - mean[c]) * inv * gamma[c] + beta[c]);
      }
    }
}
