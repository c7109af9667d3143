// v2: shared-memory blocking: the block stages TILE x TILE tiles of A and B in shared memory, so each global element is loaded once per block instead of once per thread.
// C = alpha * A * B + beta * C, row-major, A is M x K, B is K x N.
// Out-of-range tile elements are loaded as zeros, so any M, N, K works.
// @kl launch grid(cdiv(N, TILE), cdiv(M, TILE)) block(TILE, TILE)
#define TILE 32

extern "C" __global__ void sgemm(int M, int N, int K, float alpha,
                                 const float *A, const float *B, float beta,
                                 float *C) {
  int col = blockIdx.x * TILE + threadIdx.x;
  int row = blockIdx.y * TILE + threadIdx.y;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
      acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = alpha * acc + beta * C[row * N + col];
  }
}
