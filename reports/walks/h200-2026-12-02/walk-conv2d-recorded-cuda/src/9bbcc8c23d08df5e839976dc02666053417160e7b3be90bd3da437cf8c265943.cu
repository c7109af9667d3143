// v7: double buffering: two shared-memory stages; the next slice's weights and gathered inputs are loaded into registers before the current slice's FMAs and stored to the other stage after them, so global latency overlaps the math and one barrier per slice suffices.
// y[n][k][oh][ow] = sum over c, r, s of x[n][c][oh+r-1][ow+s-1] * w[k][c][r][s]
// (NCHW, KCRS, 3x3, stride 1, zero padding 1). GEMM view: M = K output
// channels, N = N*H*W pixels, reduction over CRS = C*9.
// @kl launch grid(cdiv(N * H * W, BN), cdiv(K, BM)) block(THREADS)
#define BM 128  // output channels per block
#define BN 128  // pixels per block
#define BK 8    // reduction slice (of C*9) per stage
#define THREADS 256
#define TX 16   // threads across pixels
#define TY 16   // threads across channels
#define A_LOADS (BM * BK / THREADS)  // weights per thread per stage
#define B_LOADS (BK * BN / THREADS)  // gathered inputs per thread per stage

static_assert(TX * TY == THREADS && BM == TY * 8 && BN == TX * 8, "8 x 8 outputs per thread");
static_assert(A_LOADS == 4 && B_LOADS == 4 && THREADS == 2 * BN && THREADS == 2 * BM,
              "the load mappings below assume two threads per tile row");

// Loads the reduction slice [kk0, kk0 + BK) into registers: this thread's
// four weights (zero past K or CRS) and its four gathered inputs (zero in
// the padding, past CRS or past the last pixel).
__device__ __forceinline__ void load_slice(int kk0, float *a, float *b, const float *wk, bool kvalid,
                                           int acol, const float *xn, bool pvalid, int goh, int gow,
                                           int brow, int CRS, int H, int W, int HW) {
#pragma unroll
  for (int l = 0; l < A_LOADS; ++l) {
    int kk = kk0 + acol + l;
    a[l] = (kvalid && kk < CRS) ? wk[kk] : 0.0f;
  }
#pragma unroll
  for (int l = 0; l < B_LOADS; ++l) {
    int kk = kk0 + brow + 2 * l;
    int c = kk / 9, rs = kk - c * 9;
    int r = rs / 3, s = rs - r * 3;
    int ih = goh + r - 1, iw = gow + s - 1;
    b[l] = (pvalid && kk < CRS && ih >= 0 && ih < H && iw >= 0 && iw < W)
               ? xn[(long)c * HW + ih * W + iw] : 0.0f;
  }
}

// Stores a slice from registers into one shared-memory stage.
__device__ __forceinline__ void store_slice(float (*As)[BM], float (*Bs)[BN], const float *a,
                                            const float *b, int acol, int arow, int brow, int bcol) {
#pragma unroll
  for (int l = 0; l < A_LOADS; ++l) As[acol + l][arow] = a[l];
#pragma unroll
  for (int l = 0; l < B_LOADS; ++l) Bs[brow + 2 * l][bcol] = b[l];
}

extern "C" __global__ void __launch_bounds__(THREADS, 2)  // at most 128 registers: two blocks per SM
conv2d(int N, int C, int K, int H, int W, const float *x, const float *w, float *y) {
  __shared__ __align__(16) float As[2][BK][BM];  // weights, transposed: As[stage][kk][k]
  __shared__ __align__(16) float Bs[2][BK][BN];  // im2col slice: Bs[stage][kk][pixel]
  int tid = threadIdx.x;
  int HW = H * W, P = N * HW, CRS = C * 9;
  int p0 = blockIdx.x * BN, k0 = blockIdx.y * BM;

  // Gather role: one pixel column of the B tile, rows tid / BN + 2 * l.
  int bcol = tid % BN, brow = tid / BN;
  int gp = p0 + bcol;
  bool pvalid = gp < P;
  int gn = pvalid ? gp / HW : 0, ghw = pvalid ? gp % HW : 0;
  int goh = ghw / W, gow = ghw % W;
  const float *xn = x + (long)gn * C * HW;
  // Weight role: four consecutive reduction indices of one output channel.
  int arow = tid / 2, acol = (tid % 2) * 4;
  bool kvalid = k0 + arow < K;
  const float *wk = w + (long)(k0 + arow) * CRS;

  // Compute role: channels ty*4 + {0..3} and 64 + ty*4 + {0..3}, pixels
  // tx*4 + {0..3} and 64 + tx*4 + {0..3}: float4 fragment reads.
  int tx = tid % TX, ty = tid / TX;
  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

  float a_next[A_LOADS], b_next[B_LOADS];  // the slice in flight
  load_slice(0, a_next, b_next, wk, kvalid, acol, xn, pvalid, goh, gow, brow, CRS, H, W, HW);
  store_slice(As[0], Bs[0], a_next, b_next, acol, arow, brow, bcol);
  __syncthreads();
  int stage = 0;
  for (int kk0 = 0; kk0 < CRS; kk0 += BK) {
    bool more = kk0 + BK < CRS;
    if (more) load_slice(kk0 + BK, a_next, b_next, wk, kvalid, acol, xn, pvalid, goh, gow, brow, CRS, H, W, HW);
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a[8], b[8];
      *reinterpret_cast<float4 *>(&a[0]) = *reinterpret_cast<const float4 *>(&As[stage][kk][ty * 4]);
      *reinterpret_cast<float4 *>(&a[4]) = *reinterpret_cast<const float4 *>(&As[stage][kk][64 + ty * 4]);
      *reinterpret_cast<float4 *>(&b[0]) = *reinterpret_cast<const float4 *>(&Bs[stage][kk][tx * 4]);
      *reinterpret_cast<float4 *>(&b[4]) = *reinterpret_cast<const float4 *>(&Bs[stage][kk][64 + tx * 4]);
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
    }
    if (more) {
      // The other stage was last read before the previous barrier: it is free.
      store_slice(As[stage ^ 1], Bs[stage ^ 1], a_next, b_next, acol, arow, brow, bcol);
      __syncthreads();
      stage ^= 1;
    }
  }

  // Each output pixel's offset in y without its channel term.
  long ybase[8];
  bool pok[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    int p = p0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + j - 4);
    pok[j] = p < P;
    int n = pok[j] ? p / HW : 0, hw = pok[j] ? p % HW : 0;
    ybase[j] = (long)n * K * HW + hw;
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    int k = k0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + i - 4);
    if (k < K) {
#pragma unroll
      for (int j = 0; j < 8; ++j)
        if (pok[j]) y[ybase[j] + (long)k * HW] = acc[i][j];
    }
  }
}
