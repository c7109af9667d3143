// The C reference of rmsnorm: each row's mean square in double, then the
// row divided by its root mean square and scaled by weight.
#include <math.h>

void reference(int rows, int cols, float eps, const float *x, const float *weight, float *y) {
  for (long r = 0; r < rows; ++r) {
    const float *row = x + r * cols;
    double ss = 0.0;
    for (int k = 0; k < cols; ++k) ss += (double)row[k] * row[k];
    double rms = sqrt(ss / cols + (double)eps);
    for (int c = 0; c < cols; ++c) y[r * cols + c] = (float)(row[c] / rms * weight[c]);
  }
}
