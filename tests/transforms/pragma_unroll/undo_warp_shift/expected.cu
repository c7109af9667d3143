// @kl launch grid(rows) block(BLOCK)
#define BLOCK 32
extern "C" __global__ void row_max(int rows, int cols, const float *x, float *y) {
  float m = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += BLOCK) m = fmaxf(m, x[blockIdx.x * cols + c]);
  for (int offset = 16; offset > 0; offset >>= 1)
    m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
  if (threadIdx.x == 0) y[blockIdx.x] = m;
  (void)rows;
}
