// Row sums: one block per row, each block reduces its row through shared memory.
// @kl launch grid(GRID_BLOCKS) block(BLOCK)
#define BLOCK 256
#define WARPS (BLOCK / 32)
#define MIN_BLOCKS 4  // resident blocks per SM
#define GRID_BLOCKS (132 * MIN_BLOCKS) // one full wave on the H200's 132 SMs

__device__ float block_sum(float v, float *buf) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) buf[threadIdx.x / 32] = v;
  __syncthreads();
  float r = 0.0f;
  for (int w = 0; w < WARPS; ++w) r += buf[w];
  __syncthreads();  // the next reduction may reuse buf
  return r;
}

extern "C" __global__ void __launch_bounds__(BLOCK, MIN_BLOCKS)
row_sum(int rows, int cols, const float *x, float *y) {
  __shared__ float buf[WARPS];
  for (int r = blockIdx.x; r < rows; r += gridDim.x) {
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += BLOCK) s += x[(long)r * cols + c];
    s = block_sum(s, buf);
    if (threadIdx.x == 0) y[r] = s;
  }
}
