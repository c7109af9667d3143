// v4: 2D block tiling: each thread computes a TM x TN sub-tile of C from TM values of A and TN values of B held in registers, so every shared-memory load feeds TN (or TM) multiply-adds.
// C = alpha * A * B + beta * C, row-major, A is M x K, B is K x N.
// @kl launch grid(cdiv(N, BN), cdiv(M, BM)) block(cdiv(BM * BN, TM * TN))
// @kl requires M % BM == 0 && N % BN == 0 && K % BK == 0
#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
#define THREADS (BM * BN / (TM * TN))

static_assert((BM * BK) % THREADS == 0 && (BK * BN) % THREADS == 0,
              "each thread loads a whole number of tile elements");

extern "C" __global__ void __launch_bounds__(THREADS)
sgemm(int M, int N, int K, float alpha, const float *A, const float *B,
      float beta, float *C) {
  __shared__ float As[BM][BK];
  __shared__ float Bs[BK][BN];
  int tid = threadIdx.x;
  int thread_row = tid / (BN / TN);  // owns rows thread_row * TM .. + TM - 1
  int thread_col = tid % (BN / TN);  // owns cols thread_col * TN .. + TN - 1
  const float *Ablock = A + blockIdx.y * BM * K;
  const float *Bblock = B + blockIdx.x * BN;
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
  float a_frag[TM], b_frag[TN];

  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int l = 0; l < BM * BK / THREADS; ++l) {
      int idx = tid + l * THREADS;
      As[idx / BK][idx % BK] = Ablock[(idx / BK) * K + k0 + idx % BK];
    }
#pragma unroll
    for (int l = 0; l < BK * BN / THREADS; ++l) {
      int idx = tid + l * THREADS;
      Bs[idx / BN][idx % BN] = Bblock[(k0 + idx / BN) * N + idx % BN];
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
#pragma unroll
      for (int i = 0; i < TM; ++i) a_frag[i] = As[thread_row * TM + i][kk];
#pragma unroll
      for (int j = 0; j < TN; ++j) b_frag[j] = Bs[kk][thread_col * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a_frag[i] * b_frag[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    int row = blockIdx.y * BM + thread_row * TM + i;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      int col = blockIdx.x * BN + thread_col * TN + j;
      C[row * N + col] = alpha * acc[i][j] + beta * C[row * N + col];
    }
  }
  (void)M;
}
