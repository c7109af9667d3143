// The C reference of batched_matvec: every y[b][i] as a dot product in double.
void reference(int batch, int rows, int cols, const float *A, const float *x, float *y) {
  for (long b = 0; b < batch; ++b)
    for (long i = 0; i < rows; ++i) {
      double s = 0.0;
      for (long j = 0; j < cols; ++j) s += (double)A[(b * rows + i) * cols + j] * (double)x[b * cols + j];
      y[b * rows + i] = (float)s;
    }
}
