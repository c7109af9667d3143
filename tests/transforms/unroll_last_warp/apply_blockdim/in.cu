// One sum per block of 512 threads.
// @kl launch grid(cdiv(n, WIDTH)) block(WIDTH)
#define WIDTH 512

static_assert((WIDTH & (WIDTH - 1)) == 0 && WIDTH >= 32, "the tree needs a power-of-two block");

extern "C" __global__ void block_sums(int n, const float *x, float *sums) {
  __shared__ float part[WIDTH];
  int tid = threadIdx.x;
  int i = blockIdx.x * WIDTH + tid;
  part[tid] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) part[tid] += part[tid + s];
    __syncthreads();
  }
  if (tid == 0) sums[blockIdx.x] = part[0];
}
