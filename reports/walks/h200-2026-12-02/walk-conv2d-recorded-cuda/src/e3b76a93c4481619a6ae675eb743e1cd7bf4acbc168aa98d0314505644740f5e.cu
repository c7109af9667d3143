// v3: register blocking over output channels: each thread computes KB output channels of its pixel, so every staged input value is reused KB times from a register and the grid holds KB times fewer blocks.
// y[n][k][oh][ow] = sum over c, r, s of x[n][c][oh+r-1][ow+s-1] * w[k][c][r][s]
// (NCHW, KCRS, 3x3, stride 1, zero padding 1).
// @kl launch grid(cdiv(W, TW), cdiv(H, TH), N * cdiv(K, KB)) block(TW, TH)
// @kl requires K % KB == 0
#define TW 32
#define TH 8
#define KB 8  // output channels per thread

extern "C" __global__ void conv2d(int N, int C, int K, int H, int W,
                                  const float *x, const float *w, float *y) {
  __shared__ float tile[TH + 2][TW + 2];
  int groups = K / KB;
  int n = blockIdx.z / groups, k0 = (blockIdx.z % groups) * KB;
  int ow0 = blockIdx.x * TW, oh0 = blockIdx.y * TH;
  int tx = threadIdx.x, ty = threadIdx.y, tid = ty * TW + tx;
  int oh = oh0 + ty, ow = ow0 + tx;
  float acc[KB];
#pragma unroll
  for (int j = 0; j < KB; ++j) acc[j] = 0.0f;
  for (int c = 0; c < C; ++c) {
    const float *xc = x + ((long)n * C + c) * H * W;
    for (int e = tid; e < (TH + 2) * (TW + 2); e += TW * TH) {
      int ih = oh0 - 1 + e / (TW + 2), iw = ow0 - 1 + e % (TW + 2);
      tile[e / (TW + 2)][e % (TW + 2)] =
          (ih >= 0 && ih < H && iw >= 0 && iw < W) ? xc[ih * W + iw] : 0.0f;
    }
    __syncthreads();
    float v[9];
#pragma unroll
    for (int r = 0; r < 3; ++r)
#pragma unroll
      for (int s = 0; s < 3; ++s) v[r * 3 + s] = tile[ty + r][tx + s];
    // Weights are the same for the whole block: broadcast loads through L1.
#pragma unroll
    for (int j = 0; j < KB; ++j) {
      const float *wk = w + ((k0 + j) * C + c) * 9;
#pragma unroll
      for (int t = 0; t < 9; ++t) acc[j] += v[t] * wk[t];
    }
    __syncthreads();
  }
  if (oh < H && ow < W) {
#pragma unroll
    for (int j = 0; j < KB; ++j) y[(((long)n * K + k0 + j) * H + oh) * W + ow] = acc[j];
  }
  (void)N;
}
