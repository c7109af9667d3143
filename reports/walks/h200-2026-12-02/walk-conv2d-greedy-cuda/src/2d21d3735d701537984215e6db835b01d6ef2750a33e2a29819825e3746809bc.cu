// v9: software pipelining: the next slice's raw filters and input patch are loaded into registers before the current slice's 16 GEMMs and staged after them, so their global latency overlaps the math.
// y[n][k][oh][ow] = sum over c, r, s of x[n][c][oh+r-1][ow+s-1] * w[k][c][r][s]
// (NCHW, KCRS, 3x3, stride 1, zero padding 1). With d the 4x4 input patch
// at (2*th - 1, 2*tw - 1) and g a 3x3 filter:
//   U = G g G^T,  V = B^T d B,  M[xi] = sum over c of U[xi] * V[xi]  (xi = 0..15),
//   y tile (2x2) = A^T M A
// with G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1], B^T = [1 0 -1 0; 0 1 1 0;
// 0 -1 1 0; 0 1 0 -1], A^T = [1 1 1 0; 0 1 -1 -1] (Lavin & Gray's F(2,3),
// which computes the correlation the workload defines). The filter
// transform runs once per (block, slice), the output transform once per
// block, so the 0.5s move out of the first into the second: G' = 2G in its
// middle rows gives U' = D U D (D = diag(1, 2, 2, 1)), hence M' = D M D,
// and y = (A^T D^-1) M' (D^-1 A) with A^T D^-1 = [1 .5 .5 0; 0 .5 -.5 -1].
// Each block owns BKC output channels x BT tiles for all 16 xi: 16 small
// GEMMs (BKC x BT over the channels), one slice of BC input channels at a
// time. The slice's filters arrive as one coalesced run per output channel
// (BC * 9 floats), staged raw in shared memory and transformed from there;
// each thread transforms one input patch from its registers, reading each
// of its rows as a float, an aligned float2 and a float (the patch starts
// at an odd column, so with W even its middle pair is 8-byte aligned).
// After the loop all of M goes through shared memory (64 KB, dynamic: over
// the 48 KB static limit) so that one thread sees a tile's 16 values for
// the output transform. The channel blocks are the grid's fast index: the K / BKC
// blocks that read the same input tiles run together and share them in L2.
// Here the 25 floats a thread loads for slice s + 1 are in flight during
// the GEMMs of slice s; to hold them within 128 registers the GEMM loop is
// unrolled by 2, not 8 (NVRTC, sm_90: 16 bytes of spill stores at 2, 80 at
// 8, none at 1, where the loop overhead cost more than the prefetch won).
// @kl launch grid(cdiv(K, BKC), cdiv(N * cdiv(H, 2) * cdiv(W, 2), BT)) block(THREADS) smem(16 * BKC * BT * 4)
// @kl requires cdiv(N * cdiv(H, 2) * cdiv(W, 2), BT) <= 65535 && W % 2 == 0
#define BKC 32      // output channels per block
#define BT 32       // 2x2 output tiles per block
#define BC 8        // input channels per slice
#define THREADS 256
#define WROW (BC * 9 + 1)  // one output channel's raw slice, padded: lane k reads bank 9k mod 32, all distinct
#define WLOADS (BKC * BC * 9 / THREADS)

static_assert(BKC * BC == THREADS && BT * BC == THREADS, "one (k, c) and one (tile, c) pair per thread per slice");
static_assert(16 * 16 == THREADS, "16 threads per transform point, each 8 channels x 8 tiles");
static_assert(THREADS / 8 == BKC && 8 * WLOADS == BC * 9, "8 threads load each output channel's run of BC * 9 floats");

// The slice's operands, [xi][c][k or tile], then its raw filters; after the
// loop the same memory holds M, [xi][k][tile], for the output transform.
#define USTRIDE (BC * BKC)  // one transform point's slice of U
#define VSTRIDE (BC * BT)
#define U_FLOATS (16 * USTRIDE)
#define V_FLOATS (16 * VSTRIDE)
#define W_FLOATS (BKC * WROW)
#define M_FLOATS (16 * BKC * BT)
static_assert(U_FLOATS + V_FLOATS + W_FLOATS <= M_FLOATS, "the operands fit where M goes");

// The raw data of one slice that this thread stages: WLOADS floats of its
// output channel's run of BC * 9 (every 8th, from tid % 8; wp points at its
// start, wleft floats of it exist) and the 4x4 input patch of its (tile,
// channel) at xp, read where bit i * 4 + j of inside is set; zero elsewhere.
__device__ __forceinline__ void load_slice(const float *wp, int wleft, const float *xp, unsigned inside, int W,
                                           float *wr, float *dr) {
  int e0 = threadIdx.x % 8;
#pragma unroll
  for (int q = 0; q < WLOADS; ++q) wr[q] = e0 + 8 * q < wleft ? wp[8 * q] : 0.0f;
#pragma unroll
  for (int i = 0; i < 4; ++i) {  // W even (requires): the middle pair of each row is one aligned float2
    const float *row = xp + i * W;
    dr[i * 4] = inside >> (i * 4) & 1 ? row[0] : 0.0f;
    float2 mid = inside >> (i * 4 + 1) & 1 ? *reinterpret_cast<const float2 *>(row + 1) : make_float2(0.0f, 0.0f);
    dr[i * 4 + 1] = mid.x, dr[i * 4 + 2] = mid.y;
    dr[i * 4 + 3] = inside >> (i * 4 + 3) & 1 ? row[3] : 0.0f;
  }
}

// Writes the raw filters and V = B^T d B of the staged slice to shared memory.
__device__ __forceinline__ void store_slice(float *Ws, float *Vs, const float *wr, const float *dr) {
  int tid = threadIdx.x;
#pragma unroll
  for (int q = 0; q < WLOADS; ++q) Ws[(tid / 8) * WROW + tid % 8 + 8 * q] = wr[q];
  int vt = tid % BT, vc = tid / BT;
  float t[4][4];  // B^T d
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    t[0][j] = dr[j] - dr[8 + j];
    t[1][j] = dr[4 + j] + dr[8 + j];
    t[2][j] = dr[8 + j] - dr[4 + j];
    t[3][j] = dr[4 + j] - dr[12 + j];
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {  // (B^T d) B
    float v[4] = {t[i][0] - t[i][2], t[i][1] + t[i][2], t[i][2] - t[i][1], t[i][1] - t[i][3]};
#pragma unroll
    for (int j = 0; j < 4; ++j) Vs[(i * 4 + j) * VSTRIDE + vc * BT + vt] = v[j];
  }
}

// U = G g G^T for this thread's (k, c) of the slice, from the raw filters.
__device__ __forceinline__ void transform_filters(const float *Ws, float *Us) {
  int tid = threadIdx.x, uk = tid % BKC, uc = tid / BKC;
  float g[9];
#pragma unroll
  for (int i = 0; i < 9; ++i) g[i] = Ws[uk * WROW + uc * 9 + i];
  float t[4][3];  // G g
#pragma unroll
  for (int j = 0; j < 3; ++j) {
    t[0][j] = g[j];
    t[1][j] = g[j] + g[3 + j] + g[6 + j];
    t[2][j] = g[j] - g[3 + j] + g[6 + j];
    t[3][j] = g[6 + j];
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {  // (G g) G^T
    float u[4] = {t[i][0], t[i][0] + t[i][1] + t[i][2], t[i][0] - t[i][1] + t[i][2], t[i][2]};
#pragma unroll
    for (int j = 0; j < 4; ++j) Us[(i * 4 + j) * USTRIDE + uc * BKC + uk] = u[j];
  }
}

extern "C" __global__ void  // at most 128 registers: two blocks per SM
conv2d(int N, int C, int K, int H, int W, const float *x, const float *w, float *y) {
  extern __shared__ __align__(16) float smem[];  // M_FLOATS floats
  float *Us = smem;                          // Us[(xi * BC + c) * BKC + k]
  float *Vs = smem + U_FLOATS;               // Vs[(xi * BC + c) * BT + t]
  float *Ws = smem + U_FLOATS + V_FLOATS;    // Ws[k * WROW + c * 9 + tap], raw
  int tid = threadIdx.x;
  int TH = (H + 1) / 2, TW = (W + 1) / 2, tiles = N * TH * TW;
  int t0 = blockIdx.y * BT, k0 = blockIdx.x * BKC;

  // This thread's input patch: tile t0 + tid % BT, its top-left corner
  // (channel 0) and which of its 16 points lie inside the image.
  int gt = t0 + tid % BT;
  int tn = gt / (TH * TW), trem = gt % (TH * TW);
  int ih0 = 2 * (trem / TW) - 1, iw0 = 2 * (trem % TW) - 1;
  unsigned inside = 0;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      if (gt < tiles && ih0 + i >= 0 && ih0 + i < H && iw0 + j >= 0 && iw0 + j < W) inside |= 1u << (i * 4 + j);
  const float *xpatch = x + (long)tn * C * H * W + (long)ih0 * W + iw0;  // only read where inside
  // Compute role: transform point xi, output channels ck..ck+7, tiles ct..ct+7.
  int xi = tid / 16, ck = ((tid % 16) / 4) * 8, ct = (tid % 4) * 8;

  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

  // Where this thread's loads start (channel slice 0), and how much of its
  // filter run and which input channels exist.
  int wk = tid / 8, vc = tid / BT;
  const float *wp = w + (long)(k0 + wk) * C * 9 + tid % 8;
  int wleft = k0 + wk < K ? C * 9 : 0;
  const float *xp = xpatch + (long)vc * H * W;
  int cleft = C - vc;
  float wr[WLOADS], dr[16];
  load_slice(wp, wleft, xp, cleft > 0 ? inside : 0, W, wr, dr);
  for (int c0 = 0; c0 < C; c0 += BC) {
    store_slice(Ws, Vs, wr, dr);
    __syncthreads();
    transform_filters(Ws, Us);
    __syncthreads();
    if (c0 + BC < C) {  // the next slice's loads, in flight during the GEMMs below
      wp += BC * 9, wleft -= BC * 9, xp += (long)BC * H * W, cleft -= BC;
      load_slice(wp, wleft, xp, cleft > 0 ? inside : 0, W, wr, dr);
    }
    // 16 GEMMs at once: this thread's point xi, 8 channels x 8 tiles.
    for (int c = 0; c < BC; ++c) {
      float a[8], b[8];
      const float *ua = Us + xi * USTRIDE + c * BKC + ck;
      const float *vb = Vs + xi * VSTRIDE + c * BT + ct;
      *reinterpret_cast<float4 *>(&a[0]) = *reinterpret_cast<const float4 *>(ua);
      *reinterpret_cast<float4 *>(&a[4]) = *reinterpret_cast<const float4 *>(ua + 4);
      *reinterpret_cast<float4 *>(&b[0]) = *reinterpret_cast<const float4 *>(vb);
      *reinterpret_cast<float4 *>(&b[4]) = *reinterpret_cast<const float4 *>(vb + 4);
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
  for (int i = 0; i < 8; ++i) {
    float *row = Ms + (xi * BKC + ck + i) * BT + ct;
    *reinterpret_cast<float4 *>(row) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
    *reinterpret_cast<float4 *>(row + 4) = make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
  }
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
        r[0][j] = m[j] + 0.5f * (m[4 + j] + m[8 + j]);
        r[1][j] = 0.5f * (m[4 + j] - m[8 + j]) - m[12 + j];
      }
      int n = gtile / (TH * TW), rem = gtile % (TH * TW);
      int oh = 2 * (rem / TW), ow = 2 * (rem % TW);
      float *yp = y + ((long)n * K + gk) * H * W;
#pragma unroll
      for (int i = 0; i < 2; ++i) {  // (A^T M) A
        float o0 = r[i][0] + 0.5f * (r[i][1] + r[i][2]), o1 = 0.5f * (r[i][1] - r[i][2]) - r[i][3];
        if (oh + i < H) {
          yp[(oh + i) * W + ow] = o0;
          if (ow + 1 < W) yp[(oh + i) * W + ow + 1] = o1;
        }
      }
    }
  }
}
