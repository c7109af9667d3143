// The C reference of layernorm: each row's mean and biased variance in
// double, two passes, then the normalized, scaled and shifted row.
#include <math.h>

void reference(int rows, int cols, float eps, const float *x, const float *gamma,
               const float *beta, float *y) {
  for (int r = 0; r < rows; ++r) {
    const float *row = x + (long)r * cols;
    double sum = 0.0;
    for (int c = 0; c < cols; ++c) sum += row[c];
    double mean = sum / cols;
    double sq = 0.0;
    for (int c = 0; c < cols; ++c) sq += (row[c] - mean) * (row[c] - mean);
    double inv = 1.0 / sqrt(sq / cols + (double)eps);
    for (int c = 0; c < cols; ++c)
      y[(long)r * cols + c] = (float)((row[c] - mean) * inv * gamma[c] + beta[c]);
  }
}
