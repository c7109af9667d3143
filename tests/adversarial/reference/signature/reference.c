// A and x swapped against the spec's args (M, N, A, x, y).
void reference(int M, int N, const float *x, const float *A, float *y) {
  for (int i = 0; i < M; ++i) {
    double acc = 0.0;
    for (int j = 0; j < N; ++j) acc += (double)A[(long)i * N + j] * (double)x[j];
    y[i] = (float)acc;
  }
}
