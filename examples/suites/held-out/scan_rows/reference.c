// The C reference of scan_rows: a running sum along each row, in double.
void reference(int rows, int cols, const float *x, float *y) {
  for (long r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (int c = 0; c < cols; ++c) {
      sum += x[r * cols + c];
      y[r * cols + c] = (float)sum;
    }
  }
}
