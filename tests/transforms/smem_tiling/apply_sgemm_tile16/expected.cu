// C = A * B (no alpha, beta), row-major, A is M x K, B is K x N; 16 x 16 blocks.
// @kl launch grid(cdiv(N, BD), cdiv(M, BD)) block(BD, BD)
#define BD 16

extern "C" __global__ void matmul(int M, int N, int K, const float *A,
                                  const float *B, float *C) {
  __shared__ float As[BD][BD];
  __shared__ float Bs[BD][BD];
  int tx = threadIdx.x, ty = threadIdx.y;
  int j = blockIdx.x * BD + tx;
  int i = blockIdx.y * BD + ty;
  float sum = 0.0f;
  for (int k0 = 0; k0 < K; k0 += BD) {
    As[ty][tx] = (i < M && k0 + tx < K) ? A[i * K + k0 + tx] : 0.0f;
    Bs[ty][tx] = (k0 + ty < K && j < N) ? B[(k0 + ty) * N + j] : 0.0f;
    __syncthreads();
    for (int kk = 0; kk < BD; ++kk)
      sum += As[ty][kk] * Bs[kk][tx];
    __syncthreads();  // the next iteration overwrites the tiles
  }
  if (i < M && j < N)
    C[i * N + j] = sum;
}
