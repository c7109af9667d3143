// CPU reference for softmax: each row of the rows x cols row-major matrix
// x becomes exp(x - max) / sum(exp(x - max)), with the sum in double.
#include <math.h>

void reference(int rows, int cols, const float *x, float *y) {
  for (int r = 0; r < rows; ++r) {
    const float *xr = x + (long)r * cols;
    float *yr = y + (long)r * cols;
    double m = xr[0];
    for (int c = 1; c < cols; ++c)
      if (xr[c] > m) m = xr[c];
    double s = 0.0;
    for (int c = 0; c < cols; ++c) s += exp((double)xr[c] - m);
    for (int c = 0; c < cols; ++c) yr[c] = (float)(exp((double)xr[c] - m) / s);
  }
}
