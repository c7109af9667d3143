// The C reference of maxpool2d: the maximum of each 2 x 2 window (clipped
// at the bottom and right edges), NCHW.
void reference(int N, int C, int H, int W, const float *x, float *y) {
  int OH = (H + 1) / 2, OW = (W + 1) / 2;
  for (long plane = 0; plane < (long)N * C; ++plane)
    for (int oh = 0; oh < OH; ++oh)
      for (int ow = 0; ow < OW; ++ow) {
        const float *in = x + plane * H * W;
        float m = in[2 * oh * W + 2 * ow];
        for (int h = 2 * oh; h < 2 * oh + 2 && h < H; ++h)
          for (int w = 2 * ow; w < 2 * ow + 2 && w < W; ++w)
            if (in[h * W + w] > m) m = in[h * W + w];
        y[(plane * OH + oh) * OW + ow] = m;
      }
}
