// The C reference of cummax_cols: for every element, the largest value at
// or above it in its column.
void reference(int rows, int cols, const float *x, float *y) {
  for (int c = 0; c < cols; ++c) {
    float m = x[c];
    for (long r = 0; r < rows; ++r) {
      if (x[r * cols + c] > m) m = x[r * cols + c];
      y[r * cols + c] = m;
    }
  }
}
