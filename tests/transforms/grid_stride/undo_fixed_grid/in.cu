// y = a * x + y over a fixed grid of one wave.
// @kl launch grid(GRID_BLOCKS) block(BLOCK)
#define BLOCK 256
#define GRID_BLOCKS 1056  // 8 blocks of BLOCK threads on each of 132 SMs

extern "C" __global__ void axpy(int n, float a, const float *x, float *y) {
  for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += gridDim.x * BLOCK) {
    float v = a * x[i];
    y[i] += v;
  }
}
