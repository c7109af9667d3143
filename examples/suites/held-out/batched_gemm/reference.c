// The C reference of batched_gemm: C[b] = A[b] B[b], each dot product in double.
void reference(int batch, int M, int N, int K, const float *A, const float *B, float *C) {
  for (long b = 0; b < batch; ++b)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double sum = 0.0;
        for (int p = 0; p < K; ++p)
          sum += (double)A[(b * M + i) * K + p] * (double)B[(b * K + p) * N + j];
        C[(b * M + i) * N + j] = (float)sum;
      }
}
