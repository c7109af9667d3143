// v0: the naive baseline: one thread per element of C, with the row index on threadIdx.x, so neighbouring threads read A and write C a whole row apart.
// C = alpha * A * B + beta * C, row-major, A is M x K, B is K x N.
// @kl launch grid(cdiv(M, BLOCK_DIM), cdiv(N, BLOCK_DIM)) block(BLOCK_DIM, BLOCK_DIM)
#define BLOCK_DIM 32

extern "C" __global__ void sgemm(int M, int N, int K, float alpha,
                                 const float *A, const float *B, float beta,
                                 float *C) {
  int row = blockIdx.x * BLOCK_DIM + threadIdx.x;
  int col = blockIdx.y * BLOCK_DIM + threadIdx.y;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
      acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = alpha * acc + beta * C[row * N + col];
  }
}
