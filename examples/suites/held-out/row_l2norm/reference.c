// The C reference of row_l2norm: each row's sum of squares in double, then
// its square root.
#include <math.h>

void reference(int rows, int cols, const float *x, float *norm) {
  for (int row = 0; row < rows; ++row) {
    double acc = 0.0;
    for (int col = 0; col < cols; ++col) {
      double v = x[(long)row * cols + col];
      acc += v * v;
    }
    norm[row] = (float)sqrt(acc);
  }
}
