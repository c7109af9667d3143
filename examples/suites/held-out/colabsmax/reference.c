// The C reference of colabsmax: each column's largest absolute value.
#include <math.h>

void reference(int rows, int cols, const float *x, float *amax) {
  for (int c = 0; c < cols; ++c) {
    float m = 0.0f;
    for (long r = 0; r < rows; ++r) {
      float a = fabsf(x[r * cols + c]);
      if (a > m) m = a;
    }
    amax[c] = m;
  }
}
