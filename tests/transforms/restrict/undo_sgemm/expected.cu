// @kl launch grid(cdiv(N, 32), cdiv(M, 32)) block(32, 32)
extern "C" __global__ void sgemm(int M, int N, int K, const float *__restrict__ A,
                                 const float *B, float *C) {
  int row = blockIdx.y * 32 + threadIdx.y, col = blockIdx.x * 32 + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}
