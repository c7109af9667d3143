// v2: shared-memory blocking: the block stages TILE x TILE tiles of A and B in shared memory, so each global element is loaded once per block instead of once per thread.
// C = alpha * A * B + beta * C, row-major, A is M x K, B is K x N.
// Out-of-range tile elements are loaded as zeros, so any M, N, K works.
// @kl launch grid(cdiv(N, TILE), cdiv(M, TILE)) block(TILE, TILE)
#define TILE 32

extern "C" __global__ void sgemm(int M, int N, int K, float alpha,
                                 const float *A, const float *B, float beta,
                                 float *C) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int col = blockIdx.x * TILE + tx;
  int row = blockIdx.y * TILE + ty;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
    Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.0f;
    __syncthreads();
    for (int kk = 0; kk < TILE; ++kk)
      acc += As[ty][kk] * Bs[kk][tx];
    __syncthreads();  // the next iteration overwrites the tiles
  }
  if (row < M && col < N)
    C[row * N + col] = alpha * acc + beta * C[row * N + col];
}
