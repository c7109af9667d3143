// @kl launch grid(cdiv(n, BLOCK)) block(BLOCK)
#define BLOCK 128
#define CB 8
extern "C" __global__ void dot8(int n, const float *x, const float *w, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = 0.0f;
  for (int c = 0; c < CB; ++c) s += x[i * CB + c] * w[c];
  y[i] = s;
}
