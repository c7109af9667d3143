// The C reference of colsum: each column's sum in double.
void reference(int rows, int cols, const float *a, float *s) {
  for (int c = 0; c < cols; ++c) {
    double sum = 0.0;
    for (long r = 0; r < rows; ++r) sum += a[r * cols + c];
    s[c] = (float)sum;
  }
}
