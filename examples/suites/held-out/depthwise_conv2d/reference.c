// The C reference of depthwise_conv2d: each output's nine taps summed in
// double, zero outside the plane.
void reference(int N, int C, int H, int W, const float *x, const float *f, float *y) {
  for (long plane = 0; plane < (long)N * C; ++plane) {
    const float *in = x + plane * H * W;
    const float *k = f + (plane % C) * 9;
    for (int h = 0; h < H; ++h)
      for (int w = 0; w < W; ++w) {
        double acc = 0.0;
        for (int i = -1; i <= 1; ++i)
          for (int j = -1; j <= 1; ++j)
            if (h + i >= 0 && h + i < H && w + j >= 0 && w + j < W)
              acc += (double)k[(i + 1) * 3 + (j + 1)] * (double)in[(h + i) * W + (w + j)];
        y[plane * H * W + h * W + w] = (float)acc;
      }
  }
}
