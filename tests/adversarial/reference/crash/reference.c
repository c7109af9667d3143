// Runs 8 rows past the end (as a blocked loop that forgot its tail): the
// writes past y's last element meet the guard page after the buffer.
void reference(int M, int N, const float *A, const float *x, float *y) {
  for (int i = 0; i < M + 8; ++i) {
    double acc = 0.0;
    for (int j = 0; j < N && i < M; ++j) acc += (double)A[(long)i * N + j] * (double)x[j];
    y[i] = (float)acc;
  }
}
