// An excerpt of softmax v1's last two passes: one block per row.
// @kl launch grid(rows) block(BLOCK)
#define BLOCK 256
extern "C" __global__ void softmax(int rows, int cols, const float *x, float *y, const float *mx) {
  const float *xr = x + (long)blockIdx.x * cols;
  float *yr = y + (long)blockIdx.x * cols;
  float m = mx[blockIdx.x], s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) s += expf(xr[c] - m);
  for (int c = threadIdx.x; c < cols; c += BLOCK) yr[c] = expf(xr[c] - m) / s;
}
