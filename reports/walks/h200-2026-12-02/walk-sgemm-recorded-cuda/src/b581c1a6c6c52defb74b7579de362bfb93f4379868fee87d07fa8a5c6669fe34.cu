// v1: global-memory coalescing: threadIdx.x now walks the columns, so a warp reads one row of B and writes one row of C in consecutive addresses, and reads one element of A as a broadcast.
// C = alpha * A * B + beta * C, row-major, A is M x K, B is K x N.
// @kl launch grid(cdiv(N, BLOCK_DIM), cdiv(M, BLOCK_DIM)) block(BLOCK_DIM, BLOCK_DIM)
#define BLOCK_DIM 32

extern "C" __global__ void sgemm(int M, int N, int K, float alpha,
                                 const float *A, const float *B, float beta,
                                 float *C) {
  int col = blockIdx.x * BLOCK_DIM + threadIdx.x;
  int row = blockIdx.y * BLOCK_DIM + threadIdx.y;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
      acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = alpha * acc + beta * C[row * N + col];
  }
}
