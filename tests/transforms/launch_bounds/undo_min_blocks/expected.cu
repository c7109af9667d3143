// @kl launch grid(cdiv(n, BLOCK)) block(BLOCK)
// @kl launch(finish) grid(1) block(FINISH_THREADS)
#define BLOCK 256
#define MIN_BLOCKS 4
#define FINISH_THREADS 32

extern "C" __global__ void partial_sums(int n, const float *x, float *partial) {
  __shared__ float s[BLOCK];
  int i = blockIdx.x * BLOCK + threadIdx.x;
  s[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int k = BLOCK / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}

extern "C" __global__ void finish(int parts, const float *partial, float *out) {
  float v = 0.0f;
  for (int j = threadIdx.x; j < parts; j += FINISH_THREADS) v += partial[j];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if (threadIdx.x == 0) *out = v;
}
