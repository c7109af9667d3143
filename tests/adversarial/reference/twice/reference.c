// y = A x, the right answer.
void reference(int M, int N, const float *A, const float *x, float *y) {
  for (int i = 0; i < M; ++i) {
    double acc = 0.0;
    for (int j = 0; j < N; ++j) acc += (double)A[(long)i * N + j] * (double)x[j];
    y[i] = (float)acc;
  }
}
