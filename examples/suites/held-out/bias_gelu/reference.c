// The C reference of bias_gelu: the exact GELU of x + bias, in double.
#include <math.h>

void reference(int rows, int cols, const float *x, const float *bias, float *y) {
  for (long r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      double v = (double)x[r * cols + c] + (double)bias[c];
      y[r * cols + c] = (float)(0.5 * v * (1.0 + erf(v / sqrt(2.0))));
    }
}
