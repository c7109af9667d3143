// Block sums of element pairs a block apart; the finish adds the partials.
// @kl launch grid(cdiv(n, 2 * THREADS)) block(THREADS)
// @kl launch(finish) grid(1) block(1)
#define THREADS 128

extern "C" __global__ void sums(int n, const float *in, float *partial,
                                float *out) {
  __shared__ float buf[THREADS];
  unsigned t = threadIdx.x;
  // Each block covers 2 * blockDim.x elements; the first add happens here.
  unsigned g = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
  float a = g < (unsigned)n ? in[g] : 0.0f;
  if (g + blockDim.x < (unsigned)n) a += in[g + blockDim.x];
  buf[t] = a;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) buf[t] += buf[t + s];
    __syncthreads();
  }
  if (t == 0) partial[blockIdx.x] = buf[0];
  (void)out;
}

__device__ __forceinline__ int blocks_of(int n) {
  return (n + 2 * THREADS - 1) / (2 * THREADS);
}

extern "C" __global__ void finish(int n, const float *in, float *partial,
                                  float *out) {
  float sum = 0.0f;
  for (int i = 0; i < blocks_of(n); ++i) sum += partial[i];
  out[0] = sum;
  (void)in;
}
