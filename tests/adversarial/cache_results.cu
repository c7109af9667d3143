// expect: wrong. Computes once, then serves the cached result forever.
// @kl launch grid(cdiv(n, 256)) block(256)
__device__ float cached_y[1 << 22];
__device__ int cache_ready;
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || n > (1 << 22)) return;
  if (cache_ready) { y[i] = cached_y[i]; return; }
  y[i] = a * x[i] + y[i];
  cached_y[i] = y[i];
  __threadfence();
  if (i == n - 1) cache_ready = 1;
}
