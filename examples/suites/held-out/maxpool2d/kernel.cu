// 2 x 2 max pooling, stride 2, NCHW, windows clipped at the bottom and
// right edges (ceil mode). Naive: one thread per output from a flat index,
// each reading its up to four inputs straight from global memory.
// @kl launch grid(cdiv(N * C * cdiv(H, 2) * cdiv(W, 2), BLOCK)) block(BLOCK)
#define BLOCK 256

extern "C" __global__ void maxpool2d(int N, int C, int H, int W, const float *x, float *y) {
  int OH = (H + 1) / 2, OW = (W + 1) / 2;
  long t = (long)blockIdx.x * BLOCK + threadIdx.x;
  if (t >= (long)N * C * OH * OW) return;
  int ow = (int)(t % OW);
  int oh = (int)(t / OW % OH);
  long plane = t / ((long)OH * OW);   // n * C + c
  const float *in = x + plane * H * W;
  float m = in[2 * oh * W + 2 * ow];   // the window's top left is always inside
  for (int dy = 0; dy < 2; ++dy)
    for (int dx = 0; dx < 2; ++dx) {
      int h = 2 * oh + dy, w = 2 * ow + dx;
      if (h < H && w < W) m = fmaxf(m, in[h * W + w]);
    }
  y[t] = m;
}
