// v5: register blocking over pixels with float4 stores: each thread computes PX neighbouring output columns for its KB channels, so each weight read from shared memory feeds PX FMAs and each input row window feeds PX x 3 taps, and the PX outputs of a channel leave as one float4 store.
// y[n][k][oh][ow] = sum over c, r, s of x[n][c][oh+r-1][ow+s-1] * w[k][c][r][s]
// (NCHW, KCRS, 3x3, stride 1, zero padding 1).
// @kl launch grid(cdiv(W, TW), cdiv(H, TH), N * cdiv(K, KB)) block(cdiv(TW, PX), TH)
// @kl requires K % KB == 0 && W % PX == 0
#define PX 4   // output columns per thread (one float4 store per channel)
#define TW 64  // output tile width: TW / PX threads across
#define TH 8
#define KB 8   // output channels per thread
#define CB 8   // input channels per staged chunk
#define THREADS (TW / PX * TH)

static_assert(PX == 4, "the store is one float4");

extern "C" __global__ void __launch_bounds__(THREADS)
conv2d(int N, int C, int K, int H, int W, const float *x, const float *w, float *y) {
  __shared__ float tile[CB][TH + 2][TW + 2];
  __shared__ float ws[CB][9][KB];
  int groups = K / KB;
  int n = blockIdx.z / groups, k0 = (blockIdx.z % groups) * KB;
  int ow0 = blockIdx.x * TW, oh0 = blockIdx.y * TH;
  int tx = threadIdx.x, ty = threadIdx.y, tid = ty * (TW / PX) + tx;
  int oh = oh0 + ty, ow = ow0 + tx * PX;
  float acc[KB][PX];
#pragma unroll
  for (int j = 0; j < KB; ++j)
#pragma unroll
    for (int q = 0; q < PX; ++q) acc[j][q] = 0.0f;
  for (int c0 = 0; c0 < C; c0 += CB) {
    for (int e = tid; e < CB * (TH + 2) * (TW + 2); e += THREADS) {
      int cc = e / ((TH + 2) * (TW + 2)), rest = e % ((TH + 2) * (TW + 2));
      int ih = oh0 - 1 + rest / (TW + 2), iw = ow0 - 1 + rest % (TW + 2);
      int c = c0 + cc;
      tile[cc][rest / (TW + 2)][rest % (TW + 2)] =
          (c < C && ih >= 0 && ih < H && iw >= 0 && iw < W)
              ? x[(((long)n * C + c) * H + ih) * W + iw] : 0.0f;
    }
    for (int e = tid; e < CB * 9 * KB; e += THREADS) {
      int j = e / (CB * 9), cc = (e / 9) % CB, t = e % 9;
      int c = c0 + cc;
      ws[cc][t][j] = c < C ? w[((k0 + j) * C + c) * 9 + t] : 0.0f;
    }
    __syncthreads();
#pragma unroll 2
    for (int cc = 0; cc < CB; ++cc) {
#pragma unroll
      for (int r = 0; r < 3; ++r) {
        float win[PX + 2];  // the input row under this thread's PX outputs, plus the halo
#pragma unroll
        for (int q = 0; q < PX + 2; ++q) win[q] = tile[cc][ty + r][tx * PX + q];
#pragma unroll
        for (int s = 0; s < 3; ++s)
#pragma unroll
          for (int j = 0; j < KB; ++j) {
            float wv = ws[cc][r * 3 + s][j];
#pragma unroll
            for (int q = 0; q < PX; ++q) acc[j][q] += win[q + s] * wv;
          }
      }
    }
    __syncthreads();
  }
  // W % PX == 0 and ow % PX == 0: the PX outputs lie in one row, 16-byte aligned.
  if (oh < H && ow < W) {
#pragma unroll
    for (int j = 0; j < KB; ++j)
      *reinterpret_cast<float4 *>(&y[(((long)n * K + k0 + j) * H + oh) * W + ow]) =
          make_float4(acc[j][0], acc[j][1], acc[j][2], acc[j][3]);
  }
  (void)N;
}
