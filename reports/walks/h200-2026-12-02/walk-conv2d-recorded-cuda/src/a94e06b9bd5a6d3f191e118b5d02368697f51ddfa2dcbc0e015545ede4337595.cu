// v6: implicit GEMM: the convolution becomes the product of the K x C*9 weight matrix and the virtual C*9 x N*H*W im2col matrix, gathered tile by tile into shared memory (zero padding at the gather), with 128 x 128 x 8 block tiles, 8 x 8 register tiles per thread and float4 fragment reads.
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

extern "C" __global__ void __launch_bounds__(THREADS)
conv2d(int N, int C, int K, int H, int W, const float *x, const float *w, float *y) {
  __shared__ __align__(16) float As[BK][BM];  // weights, transposed: As[kk][k]
  __shared__ __align__(16) float Bs[BK][BN];  // im2col slice: Bs[kk][pixel]
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

  for (int kk0 = 0; kk0 < CRS; kk0 += BK) {
#pragma unroll
    for (int l = 0; l < A_LOADS; ++l) {
      int kk = kk0 + acol + l;
      As[acol + l][arow] = (kvalid && kk < CRS) ? wk[kk] : 0.0f;
    }
#pragma unroll
    for (int l = 0; l < B_LOADS; ++l) {
      int row = brow + 2 * l, kk = kk0 + row;
      int c = kk / 9, rs = kk - c * 9;
      int r = rs / 3, s = rs - r * 3;
      int ih = goh + r - 1, iw = gow + s - 1;
      Bs[row][bcol] = (pvalid && kk < CRS && ih >= 0 && ih < H && iw >= 0 && iw < W)
                          ? xn[(long)c * HW + ih * W + iw] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a[8], b[8];
      *reinterpret_cast<float4 *>(&a[0]) = *reinterpret_cast<const float4 *>(&As[kk][ty * 4]);
      *reinterpret_cast<float4 *>(&a[4]) = *reinterpret_cast<const float4 *>(&As[kk][64 + ty * 4]);
      *reinterpret_cast<float4 *>(&b[0]) = *reinterpret_cast<const float4 *>(&Bs[kk][tx * 4]);
      *reinterpret_cast<float4 *>(&b[4]) = *reinterpret_cast<const float4 *>(&Bs[kk][64 + tx * 4]);
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
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
