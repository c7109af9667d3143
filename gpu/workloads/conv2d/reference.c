// CPU reference for conv2d: NCHW fp32, KCRS weights, 3x3, stride 1, zero
// padding 1; each output is accumulated in double.
void reference(int N, int C, int K, int H, int W, const float *x,
               const float *w, float *y) {
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k)
      for (int oh = 0; oh < H; ++oh)
        for (int ow = 0; ow < W; ++ow) {
          double acc = 0.0;
          for (int c = 0; c < C; ++c)
            for (int r = 0; r < 3; ++r)
              for (int s = 0; s < 3; ++s) {
                int ih = oh + r - 1, iw = ow + s - 1;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += (double)x[(((long)n * C + c) * H + ih) * W + iw] *
                       (double)w[(((long)k * C + c) * 3 + r) * 3 + s];
              }
          y[(((long)n * K + k) * H + oh) * W + ow] = (float)acc;
        }
}
