// C = A * B (no alpha, beta), row-major, A is M x K, B is K x N; 16 x 16 blocks.
// @kl launch grid(cdiv(N, BD), cdiv(M, BD)) block(BD, BD)
#define BD 16

extern "C" __global__ void matmul(int M, int N, int K, const float *A,
                                  const float *B, float *C) {
  int j = blockIdx.x * BD + threadIdx.x;
  int i = blockIdx.y * BD + threadIdx.y;
  if (i < M && j < N) {
    float sum = 0.0f;
    for (int k = 0; k < K; ++k)
      sum += A[i * K + k] * B[k * N + j];
    C[i * N + j] = sum;
  }
}
