// The C reference of matmul_abt: C = A B^T, each dot product in double.
void reference(int M, int N, int K, const float *A, const float *B, float *C) {
  for (long m = 0; m < M; ++m)
    for (long n = 0; n < N; ++n) {
      double acc = 0.0;
      for (int k = 0; k < K; ++k) acc += (double)A[m * K + k] * (double)B[n * K + k];
      C[m * N + n] = (float)acc;
    }
}
