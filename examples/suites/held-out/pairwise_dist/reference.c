// The C reference of pairwise_dist: every squared distance in double.
void reference(int N, int M, int D, const float *X, const float *Y, float *dist) {
  for (long i = 0; i < N; ++i)
    for (long j = 0; j < M; ++j) {
      double s = 0.0;
      for (long d = 0; d < D; ++d) {
        double diff = (double)X[i * D + d] - (double)Y[j * D + d];
        s += diff * diff;
      }
      dist[i * M + j] = (float)s;
    }
}
