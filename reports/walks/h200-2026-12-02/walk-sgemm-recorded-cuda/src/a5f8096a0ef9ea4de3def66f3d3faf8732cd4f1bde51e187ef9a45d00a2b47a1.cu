// v3: 1D block tiling: each thread computes TM consecutive rows of one column of C, reusing each B value from shared memory TM times from a register.
// C = alpha * A * B + beta * C, row-major, A is M x K, B is K x N.
// @kl launch grid(cdiv(N, BN), cdiv(M, BM)) block(cdiv(BM * BN, TM))
// @kl requires M % BM == 0 && N % BN == 0 && K % BK == 0
#define BM 64
#define BN 64
#define BK 8
#define TM 8
#define THREADS (BM * BN / TM)

// Each thread loads exactly one element of each tile.
static_assert(BM * BK == THREADS && BK * BN == THREADS, "tile shape must match the block size");

extern "C" __global__ void __launch_bounds__(THREADS)
sgemm(int M, int N, int K, float alpha, const float *A, const float *B,
      float beta, float *C) {
  __shared__ float As[BM][BK];
  __shared__ float Bs[BK][BN];
  int tid = threadIdx.x;
  int thread_col = tid % BN;
  int thread_row = tid / BN;  // owns rows thread_row * TM .. + TM - 1
  int a_row = tid / BK, a_col = tid % BK;
  int b_row = tid / BN, b_col = tid % BN;
  const float *Ablock = A + blockIdx.y * BM * K;
  const float *Bblock = B + blockIdx.x * BN;
  float acc[TM];
#pragma unroll
  for (int i = 0; i < TM; ++i) acc[i] = 0.0f;

  for (int k0 = 0; k0 < K; k0 += BK) {
    As[a_row][a_col] = Ablock[a_row * K + k0 + a_col];
    Bs[b_row][b_col] = Bblock[(k0 + b_row) * N + b_col];
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float b = Bs[kk][thread_col];
#pragma unroll
      for (int i = 0; i < TM; ++i)
        acc[i] += As[thread_row * TM + i][kk] * b;
    }
    __syncthreads();
  }
  int col = blockIdx.x * BN + thread_col;
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    int row = blockIdx.y * BM + thread_row * TM + i;
    C[row * N + col] = alpha * acc[i] + beta * C[row * N + col];
  }
  (void)M;
}
