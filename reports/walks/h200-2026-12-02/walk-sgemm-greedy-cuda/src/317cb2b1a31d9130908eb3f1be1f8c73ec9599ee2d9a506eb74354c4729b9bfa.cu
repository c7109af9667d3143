// v7: double buffering: two shared-memory stages, with the next tile's global loads issued into registers before the current tile's math and stored to the other stage after it, so load latency overlaps computation and one barrier per tile suffices.
// C = alpha * A * B + beta * C, row-major, A is M x K, B is K x N.
// @kl launch grid(cdiv(N, BN), cdiv(M, BM)) block(cdiv(BM * BN, TM * TN))
// @kl requires M % BM == 0 && N % BN == 0 && K % BK == 0
#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
#define THREADS (BM * BN / (TM * TN))
#define WARPS_M 2                      // warps stacked along M
#define WARPS_N (THREADS / 32 / WARPS_M)
#define WM (BM / WARPS_M)              // rows of C per warp
#define WN (BN / WARPS_N)              // columns of C per warp
#define LANES_M 8                      // lanes stacked along M inside a warp
#define LANES_N (32 / LANES_M)
#define WSUB_M (WM * 4 / TM)           // distance between a thread's 4-row groups
#define WSUB_N (WN * 4 / TN)           // distance between a thread's 4-column groups

static_assert(BK % 4 == 0 && TM % 4 == 0 && TN % 4 == 0, "float4 paths need multiples of 4");
static_assert((BM * BK / 4) % THREADS == 0 && (BK * BN / 4) % THREADS == 0,
              "each thread loads a whole number of float4 per tile");
static_assert(WM == LANES_M * TM && WN == LANES_N * TN, "warp tile must be covered by its lanes");

extern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float *A, const float *B,
      float beta, float *C) {
  __shared__ float As[BK][BM];  // transposed: As[k][m]
  __shared__ float Bs[BK][BN];
  int tid = threadIdx.x;
  int warp = tid / 32, lane = tid % 32;
  int warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;
  int lane_m = lane / LANES_N, lane_n = lane % LANES_N;
  int row0 = warp_m * WM + lane_m * 4;  // first row of the thread's fragments, inside the tile
  int col0 = warp_n * WN + lane_n * 4;
  const float *Ablock = A + blockIdx.y * BM * K;
  const float *Bblock = B + blockIdx.x * BN;
  float acc[TM][TN];
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
  float a_frag[TM], b_frag[TN];

  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int l = 0; l < BM * BK / 4 / THREADS; ++l) {
      int idx = tid + l * THREADS;
      int r = idx / (BK / 4), c = (idx % (BK / 4)) * 4;
      float4 v = *reinterpret_cast<const float4 *>(&Ablock[r * K + k0 + c]);
      As[c + 0][r] = v.x;
      As[c + 1][r] = v.y;
      As[c + 2][r] = v.z;
      As[c + 3][r] = v.w;
    }
#pragma unroll
    for (int l = 0; l < BK * BN / 4 / THREADS; ++l) {
      int idx = tid + l * THREADS;
      int r = idx / (BN / 4), c = (idx % (BN / 4)) * 4;
      *reinterpret_cast<float4 *>(&Bs[r][c]) =
          *reinterpret_cast<const float4 *>(&Bblock[(k0 + r) * N + c]);
    }
    __syncthreads();
    for (int kk = 0; kk < BK; ++kk) {
#pragma unroll
      for (int i = 0; i < TM; i += 4)
        *reinterpret_cast<float4 *>(&a_frag[i]) =
            *reinterpret_cast<const float4 *>(&As[kk][row0 + (i / 4) * WSUB_M]);
#pragma unroll
      for (int j = 0; j < TN; j += 4)
        *reinterpret_cast<float4 *>(&b_frag[j]) =
            *reinterpret_cast<const float4 *>(&Bs[kk][col0 + (j / 4) * WSUB_N]);
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a_frag[i] * b_frag[j];
    }
    __syncthreads();
  }
  for (int i = 0; i < TM; ++i) {
    int row = blockIdx.y * BM + row0 + (i / 4) * WSUB_M + i % 4;
#pragma unroll
    for (int j = 0; j < TN; j += 4) {
      int col = blockIdx.x * BN + col0 + (j / 4) * WSUB_N;
      float4 *dst = reinterpret_cast<float4 *>(&C[row * N + col]);
      float4 c = *dst;
      c.x = alpha * acc[i][j + 0] + beta * c.x;
      c.y = alpha * acc[i][j + 1] + beta * c.y;
      c.z = alpha * acc[i][j + 2] + beta * c.z;
      c.w = alpha * acc[i][j + 3] + beta * c.w;
      *dst = c;
    }
  }
  (void)M;
}
