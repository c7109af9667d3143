// softmax v1's block sum: a tree over the BLOCK slots of buf, BLOCK a
// power of two, with sequential addressing.
// @kl launch grid(rows) block(BLOCK)
#define BLOCK 256

__device__ float block_sum(float v, float *buf) {
  int tid = threadIdx.x;
  __syncthreads();
  buf[tid] = v;
  __syncthreads();
  for (int s = 1; s < BLOCK; s *= 2) {
    int index = 2 * s * tid;
    if (index < BLOCK) buf[index] += buf[index + s];
    __syncthreads();
  }
  return buf[0];
}

extern "C" __global__ void row_sums(int rows, int cols, const float *x, float *y) {
  __shared__ float buf[BLOCK];
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) s += x[(long)blockIdx.x * cols + c];
  s = block_sum(s, buf);
  if (threadIdx.x == 0) y[blockIdx.x] = s;
}
