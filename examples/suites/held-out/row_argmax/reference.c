// The C reference of row_argmax: the first index of each row's maximum.
void reference(int rows, int cols, const float *x, int *idx) {
  for (long r = 0; r < rows; ++r) {
    int best = 0;
    float m = x[r * cols];
    for (int c = 1; c < cols; ++c)
      if (x[r * cols + c] > m) {
        m = x[r * cols + c];
        best = c;
      }
    idx[r] = best;
  }
}
