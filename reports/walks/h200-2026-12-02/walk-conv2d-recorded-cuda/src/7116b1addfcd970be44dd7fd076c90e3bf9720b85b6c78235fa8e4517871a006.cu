// v4: weights in shared memory with input channels staged CB at a time: one barrier pair per chunk of CB channels instead of per channel, and the KB x CB x 9 weights come from shared memory instead of per-thread global loads; a chunk past C is zero-filled and still computed.
// y[n][k][oh][ow] = sum over c, r, s of x[n][c][oh+r-1][ow+s-1] * w[k][c][r][s]
// (NCHW, KCRS, 3x3, stride 1, zero padding 1).
// @kl launch grid(cdiv(W, TW), cdiv(H, TH), N * cdiv(K, KB)) block(TW, TH)
// @kl requires K % KB == 0
#define TW 32
#define TH 8
#define KB 8  // output channels per thread
#define CB 8  // input channels per staged chunk
#define THREADS (TW * TH)

extern "C" __global__ void conv2d(int N, int C, int K, int H, int W,
                                  const float *x, const float *w, float *y) {
  __shared__ float tile[CB][TH + 2][TW + 2];
  __shared__ float ws[CB][9][KB];  // [c][tap][k]: a thread's KB weights are contiguous
  int groups = K / KB;
  int n = blockIdx.z / groups, k0 = (blockIdx.z % groups) * KB;
  int ow0 = blockIdx.x * TW, oh0 = blockIdx.y * TH;
  int tx = threadIdx.x, ty = threadIdx.y, tid = ty * TW + tx;
  int oh = oh0 + ty, ow = ow0 + tx;
  float acc[KB];
#pragma unroll
  for (int j = 0; j < KB; ++j) acc[j] = 0.0f;
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
      int j = e / (CB * 9), cc = (e / 9) % CB, t = e % 9;  // consecutive e: consecutive weights of one k
      int c = c0 + cc;
      ws[cc][t][j] = c < C ? w[((k0 + j) * C + c) * 9 + t] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int cc = 0; cc < CB; ++cc) {
#pragma unroll
      for (int r = 0; r < 3; ++r)
#pragma unroll
        for (int s = 0; s < 3; ++s) {
          float v = tile[cc][ty + r][tx + s];
#pragma unroll
          for (int j = 0; j < KB; ++j) acc[j] += v * ws[cc][r * 3 + s][j];
        }
    }
    __syncthreads();
  }
  if (oh < H && ow < W) {
#pragma unroll
    for (int j = 0; j < KB; ++j) y[(((long)n * K + k0 + j) * H + oh) * W + ow] = acc[j];
  }
  (void)N;
}
