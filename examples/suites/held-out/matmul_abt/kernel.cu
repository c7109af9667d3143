// C = A B^T for a row-major A (M x K) and B (N x K), the way a linear layer
// y = x W^T stores its weight: C[m][n] = sum over k of A[m][k] * B[n][k].
// Naive: one thread per element of C on a 2D grid with n on threadIdx.x,
// so at every step a warp reads 32 rows of B (K floats apart); nothing is
// shared between threads.
// @kl launch grid(cdiv(N, TILE), cdiv(M, TILE)) block(TILE, TILE)
#define TILE 16

extern "C" __global__ void matmul_abt(int M, int N, int K, const float *A, const float *B, float *C) {
  int n = blockIdx.x * TILE + threadIdx.x;
  int m = blockIdx.y * TILE + threadIdx.y;
  if (m < M && n < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[m * K + k] * B[n * K + k];
    C[m * N + n] = acc;
  }
}
