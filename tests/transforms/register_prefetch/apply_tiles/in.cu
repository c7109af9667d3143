// Each block weights every TILE-float tile of x, staged through shared
// memory: the load of a tile opens its iteration.
// @kl launch grid(cdiv(n, THREADS)) block(THREADS)
#define THREADS 128
#define PER 4
#define TILE (THREADS * PER)

// PER floats of the tile at xp (left floats of it exist), masked.
__device__ __forceinline__ void load_tile(const float *xp, int left, float *r) {
#pragma unroll
  for (int q = 0; q < PER; ++q) r[q] = threadIdx.x + THREADS * q < left ? xp[THREADS * q] : 0.0f;
}

extern "C" __global__ void tiles(int n, const float *x, float *y) {
  __shared__ float s[TILE];
  const float *xp = x + threadIdx.x;
  int left = n;
  float acc = 0.0f;
  for (int t = 0; t < n; t += TILE, xp += TILE, left -= TILE) {
    float r[PER];
    load_tile(xp, left, r);
#pragma unroll
    for (int q = 0; q < PER; ++q) s[threadIdx.x + THREADS * q] = r[q];
    __syncthreads();
    // The work the next tile's loads can overlap.
    for (int k = 0; k < TILE; ++k) acc += s[k] * (float)(k % 3);
    __syncthreads();
  }
  int i = blockIdx.x * THREADS + threadIdx.x;
  if (i < n) y[i] = acc;
}
