// Depthwise 3 x 3 convolution (cross-correlation) of an NCHW tensor, one
// filter per channel, stride 1, zero padding 1 so the output keeps H x W:
// y[n][c][h][w] = sum over i, j in [0, 3) of f[c][i][j] * x[n][c][h+i-1][w+j-1].
// Naive: one thread per output on a 3D grid (w on threadIdx.x, h on
// threadIdx.y, the plane n * C + c on blockIdx.z), every tap and every
// filter weight read from global memory.
// @kl launch grid(cdiv(W, BW), cdiv(H, BH), N * C) block(BW, BH)
#define BW 32
#define BH 8
#define KS 3

extern "C" __global__ void depthwise_conv2d(int N, int C, int H, int W, const float *x, const float *f, float *y) {
  int w = blockIdx.x * BW + threadIdx.x;
  int h = blockIdx.y * BH + threadIdx.y;
  int plane = blockIdx.z;   // n * C + c
  if (w >= W || h >= H) return;
  int c = plane % C;
  const float *in = x + (size_t)plane * H * W;
  const float *k = f + c * KS * KS;
  float acc = 0.0f;
  for (int i = 0; i < KS; ++i)
    for (int j = 0; j < KS; ++j) {
      int hh = h + i - 1, ww = w + j - 1;
      if (hh >= 0 && hh < H && ww >= 0 && ww < W) acc += k[i * KS + j] * in[hh * W + ww];
    }
  y[(size_t)plane * H * W + h * W + w] = acc;
}
