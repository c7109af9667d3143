// CPU reference for sgemm: C = alpha * A * B + beta * C, row-major,
// A is M x K, B is K x N; each dot product is accumulated in double.
void reference(int M, int N, int K, float alpha, const float *A,
               const float *B, float beta, float *C) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double acc = 0.0;
      for (int k = 0; k < K; ++k)
        acc += (double)A[(long)i * K + k] * (double)B[(long)k * N + j];
      C[(long)i * N + j] =
          (float)((double)alpha * acc + (double)beta * (double)C[(long)i * N + j]);
    }
}
