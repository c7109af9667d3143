// v0: the naive baseline: one thread per output element with the output channel as the fastest-varying index, so neighbouring threads read weights C*9 floats apart and write outputs H*W floats apart.
// y[n][k][oh][ow] = sum over c, r, s of x[n][c][oh+r-1][ow+s-1] * w[k][c][r][s]
// (NCHW, KCRS, 3x3, stride 1, zero padding 1).
// @kl launch grid(cdiv(N * K * H * W, BLOCK)) block(BLOCK)
#define BLOCK 256

extern "C" __global__ void conv2d(int N, int C, int K, int H, int W,
                                  const float *x, const float *w, float *y) {
  long i = (long)blockIdx.x * BLOCK + threadIdx.x;
  if (i >= (long)N * K * H * W) return;
  int k = (int)(i % K);
  long rest = i / K;
  int ow = (int)(rest % W);
  rest /= W;
  int oh = (int)(rest % H);
  int n = (int)(rest / H);
  float acc = 0.0f;
  for (int c = 0; c < C; ++c)
    for (int r = 0; r < 3; ++r)
      for (int s = 0; s < 3; ++s) {
        int ih = oh + r - 1, iw = ow + s - 1;
        if (ih >= 0 && ih < H && iw >= 0 && iw < W)
          acc += x[(((long)n * C + c) * H + ih) * W + iw] * w[((k * C + c) * 3 + r) * 3 + s];
      }
  y[(((long)n * K + k) * H + oh) * W + ow] = acc;
}
