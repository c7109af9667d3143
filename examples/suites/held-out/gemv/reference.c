// The C reference of gemv: y = A x, each row's dot product in double.
void reference(int M, int N, const float *A, const float *x, float *y) {
  for (int i = 0; i < M; ++i) {
    double sum = 0.0;
    for (int j = 0; j < N; ++j) sum += (double)A[(long)i * N + j] * (double)x[j];
    y[i] = (float)sum;
  }
}
