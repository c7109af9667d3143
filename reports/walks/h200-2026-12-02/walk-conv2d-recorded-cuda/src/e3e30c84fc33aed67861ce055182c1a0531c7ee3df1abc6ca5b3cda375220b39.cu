// v2: shared-memory input tiles with a halo: a block computes a TH x TW output tile of one output channel and stages each input channel's (TH+2) x (TW+2) window in shared memory once, instead of every thread loading its nine taps from global memory.
// y[n][k][oh][ow] = sum over c, r, s of x[n][c][oh+r-1][ow+s-1] * w[k][c][r][s]
// (NCHW, KCRS, 3x3, stride 1, zero padding 1).
// @kl launch grid(cdiv(W, TW), cdiv(H, TH), N * K) block(TW, TH)
#define TW 32  // a warp spans one tile row: coalesced loads and stores
#define TH 8

extern "C" __global__ void conv2d(int N, int C, int K, int H, int W,
                                  const float *x, const float *w, float *y) {
  __shared__ float tile[TH + 2][TW + 2];
  int n = blockIdx.z / K, k = blockIdx.z % K;
  int ow0 = blockIdx.x * TW, oh0 = blockIdx.y * TH;
  int tx = threadIdx.x, ty = threadIdx.y, tid = ty * TW + tx;
  int oh = oh0 + ty, ow = ow0 + tx;
  float acc = 0.0f;
  for (int c = 0; c < C; ++c) {
    const float *xc = x + ((long)n * C + c) * H * W;
    // The window starts one row and one column before the tile; outside the
    // image it holds the zero padding.
    for (int e = tid; e < (TH + 2) * (TW + 2); e += TW * TH) {
      int ih = oh0 - 1 + e / (TW + 2), iw = ow0 - 1 + e % (TW + 2);
      tile[e / (TW + 2)][e % (TW + 2)] =
          (ih >= 0 && ih < H && iw >= 0 && iw < W) ? xc[ih * W + iw] : 0.0f;
    }
    __syncthreads();
    const float *wk = w + (k * C + c) * 9;
#pragma unroll
    for (int r = 0; r < 3; ++r)
#pragma unroll
      for (int s = 0; s < 3; ++s) acc += tile[ty + r][tx + s] * wk[r * 3 + s];
    __syncthreads();  // the next channel overwrites the window
  }
  if (oh < H && ow < W) y[(((long)n * K + k) * H + oh) * W + ow] = acc;
  (void)N;
}
