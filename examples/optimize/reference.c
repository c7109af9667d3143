// The C reference of examples/optimize/matmul.cu: c = a * b, row-major,
// each dot product accumulated in double.
void reference(int rows, int cols, int inner, const float *a, const float *b, float *c) {
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      double sum = 0.0;
      for (int p = 0; p < inner; ++p) sum += (double)a[(long)i * inner + p] * (double)b[(long)p * cols + j];
      c[(long)i * cols + j] = (float)sum;
    }
}
