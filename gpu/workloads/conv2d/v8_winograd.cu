// v8: Winograd F(2x2, 3x3): each 2x2 output tile is computed in a 4x4 transform domain, 16 independent channel reductions of 16 products instead of 36 per (tile, channel), 2.25x fewer multiplications than the direct convolution.
// y[n][k][oh][ow] = sum over c, r, s of x[n][c][oh+r-1][ow+s-1] * w[k][c][r][s]
// (NCHW, KCRS, 3x3, stride 1, zero padding 1). With d the 4x4 input patch
// at (2*th - 1, 2*tw - 1) and g a 3x3 filter:
//   U = G g G^T,  V = B^T d B,  M[xi] = sum over c of U[xi] * V[xi]  (xi = 0..15),
//   y tile (2x2) = A^T M A
// with G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1], B^T = [1 0 -1 0; 0 1 1 0;
// 0 -1 1 0; 0 1 0 -1], A^T = [1 1 1 0; 0 1 -1 -1] (Lavin & Gray's F(2,3),
// which computes the correlation the workload defines). Each block owns BKC
// output channels x BT tiles for all 16 xi: 16 small GEMMs (BKC x BT over
// the channels), both operands transformed on the fly into shared memory,
// one slice of BC input channels at a time; then all of M goes through
// shared memory (64 KB, dynamic: over the 48 KB static limit) so that one
// thread sees a tile's 16 values for the output transform, and the
// accumulators are dead before it starts.
// @kl launch grid(cdiv(N * cdiv(H, 2) * cdiv(W, 2), BT), cdiv(K, BKC)) block(THREADS) smem(16 * BKC * BT * 4)
#define BKC 32      // output channels per block
#define BT 32       // 2x2 output tiles per block
#define BC 8        // input channels per slice
#define THREADS 256

static_assert(BKC * BC == THREADS && BT * BC == THREADS, "one (k, c) and one (tile, c) pair per thread per slice");
static_assert(16 * 16 == THREADS, "16 threads per transform point, each 8 channels x 8 tiles");

// The slice's operands, [xi][c][k or tile]; after the loop the same memory
// holds M, [xi][k][tile], for the output transform.
#define U_FLOATS (16 * BC * BKC)
#define V_FLOATS (16 * BC * BT)
#define M_FLOATS (16 * BKC * BT)
static_assert(U_FLOATS + V_FLOATS <= M_FLOATS, "the operands fit where M goes");

extern "C" __global__ void __launch_bounds__(THREADS, 2)  // at most 128 registers: two blocks per SM
conv2d(int N, int C, int K, int H, int W, const float *x, const float *w, float *y) {
  extern __shared__ __align__(16) float smem[];  // M_FLOATS floats
  float *Us = smem;             // Us[(xi * BC + c) * BKC + k]
  float *Vs = smem + U_FLOATS;  // Vs[(xi * BC + c) * BT + t]
  int tid = threadIdx.x;
  int TH = (H + 1) / 2, TW = (W + 1) / 2, tiles = N * TH * TW, HW = H * W;
  int t0 = blockIdx.x * BT, k0 = blockIdx.y * BKC;

  // Filter role: output channel k0 + uk, input channel c0 + uc.
  int uk = tid % BKC, uc = tid / BKC;
  bool kvalid = k0 + uk < K;
  // Input role: tile t0 + vt, input channel c0 + vc.
  int vt = tid % BT, vc = tid / BT;
  int gt = t0 + vt;
  bool tvalid = gt < tiles;
  int tn = tvalid ? gt / (TH * TW) : 0, trem = tvalid ? gt % (TH * TW) : 0;
  int ih0 = 2 * (trem / TW) - 1, iw0 = 2 * (trem % TW) - 1;
  // Compute role: transform point xi, output channels ck..ck+7, tiles ct..ct+7.
  int xi = tid / 16, ck = ((tid % 16) / 4) * 8, ct = (tid % 4) * 8;

  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

  for (int c0 = 0; c0 < C; c0 += BC) {
    // U = G g G^T for this thread's (k, c); zero past K or C.
    {
      float g[9];
      bool ok = kvalid && c0 + uc < C;
      const float *gp = w + ((long)(k0 + uk) * C + c0 + uc) * 9;
#pragma unroll
      for (int i = 0; i < 9; ++i) g[i] = ok ? gp[i] : 0.0f;
      float t[4][3];  // G g
#pragma unroll
      for (int j = 0; j < 3; ++j) {
        t[0][j] = g[j];
        t[1][j] = 0.5f * (g[j] + g[3 + j] + g[6 + j]);
        t[2][j] = 0.5f * (g[j] - g[3 + j] + g[6 + j]);
        t[3][j] = g[6 + j];
      }
#pragma unroll
      for (int i = 0; i < 4; ++i) {  // (G g) G^T
        float u[4] = {t[i][0], 0.5f * (t[i][0] + t[i][1] + t[i][2]), 0.5f * (t[i][0] - t[i][1] + t[i][2]), t[i][2]};
#pragma unroll
        for (int j = 0; j < 4; ++j) Us[((i * 4 + j) * BC + uc) * BKC + uk] = u[j];
      }
    }
    // V = B^T d B for this thread's (tile, c); zero in the padding, past C
    // or past the last tile.
    {
      float d[4][4];
      bool ok = tvalid && c0 + vc < C;
      const float *xp = x + ((long)tn * C + c0 + vc) * HW;
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          int ih = ih0 + i, iw = iw0 + j;
          d[i][j] = (ok && ih >= 0 && ih < H && iw >= 0 && iw < W) ? xp[ih * W + iw] : 0.0f;
        }
      float t[4][4];  // B^T d
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        t[0][j] = d[0][j] - d[2][j];
        t[1][j] = d[1][j] + d[2][j];
        t[2][j] = d[2][j] - d[1][j];
        t[3][j] = d[1][j] - d[3][j];
      }
#pragma unroll
      for (int i = 0; i < 4; ++i) {  // (B^T d) B
        float v[4] = {t[i][0] - t[i][2], t[i][1] + t[i][2], t[i][2] - t[i][1], t[i][1] - t[i][3]};
#pragma unroll
        for (int j = 0; j < 4; ++j) Vs[((i * 4 + j) * BC + vc) * BT + vt] = v[j];
      }
    }
    __syncthreads();
    // 16 GEMMs at once: this thread's point xi, 8 channels x 8 tiles.
#pragma unroll
    for (int c = 0; c < BC; ++c) {
      float a[8], b[8];
      const float *ua = Us + (xi * BC + c) * BKC + ck;
      const float *vb = Vs + (xi * BC + c) * BT + ct;
      *reinterpret_cast<float4 *>(&a[0]) = *reinterpret_cast<const float4 *>(ua);
      *reinterpret_cast<float4 *>(&a[4]) = *reinterpret_cast<const float4 *>(ua + 4);
      *reinterpret_cast<float4 *>(&b[0]) = *reinterpret_cast<const float4 *>(vb);
      *reinterpret_cast<float4 *>(&b[4]) = *reinterpret_cast<const float4 *>(vb + 4);
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }

  // Output transform: M to shared memory, then each thread takes four
  // (channel, tile) pairs and writes their 2x2 outputs.
  float *Ms = smem;  // Ms[(xi * BKC + k) * BT + t]
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) Ms[(xi * BKC + ck + i) * BT + ct + j] = acc[i][j];
  __syncthreads();
#pragma unroll
  for (int q = 0; q < BKC * BT / THREADS; ++q) {
    int pair = tid + q * THREADS;
    int k = pair / BT, t = pair % BT;
    int gk = k0 + k, gtile = t0 + t;
    if (gk < K && gtile < tiles) {
      float m[16];
#pragma unroll
      for (int e = 0; e < 16; ++e) m[e] = Ms[(e * BKC + k) * BT + t];
      float r[2][4];  // A^T M
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        r[0][j] = m[j] + m[4 + j] + m[8 + j];
        r[1][j] = m[4 + j] - m[8 + j] - m[12 + j];
      }
      int n = gtile / (TH * TW), rem = gtile % (TH * TW);
      int oh = 2 * (rem / TW), ow = 2 * (rem % TW);
      float *yp = y + ((long)n * K + gk) * HW;
#pragma unroll
      for (int i = 0; i < 2; ++i) {  // (A^T M) A
        float o0 = r[i][0] + r[i][1] + r[i][2], o1 = r[i][1] - r[i][2] - r[i][3];
        if (oh + i < H) {
          yp[(oh + i) * W + ow] = o0;
          if (ow + 1 < W) yp[(oh + i) * W + ow + 1] = o1;
        }
      }
    }
  }
}
