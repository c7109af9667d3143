// Dot products of a and b per block in chunks of CHUNK, prefetched: the
// next chunk's two operands are loaded while this chunk's products run.
// @kl launch grid(cdiv(n, BLOCK)) block(BLOCK)
#define BLOCK 256
#define CHUNK 2

__device__ __forceinline__ void load_pair(const float *ap, const float *bp, int left, float *ra, float *rb) {
#pragma unroll
  for (int q = 0; q < CHUNK; ++q) {
    ra[q] = q < left ? ap[q * BLOCK] : 0.0f;
    rb[q] = q < left ? bp[q * BLOCK] : 0.0f;
  }
}

extern "C" __global__ void dot(int n, int m, const float *a, const float *b, float *out) {
  __shared__ float prod[BLOCK * CHUNK];
  const float *ap = a + blockIdx.x * m + threadIdx.x, *bp = b + blockIdx.x * m + threadIdx.x;
  int left = m - threadIdx.x;
  float sum = 0.0f;
  float ra[CHUNK], rb[CHUNK];
  load_pair(ap, bp, left, ra, rb);
  for (int c = 0; c < m; c += BLOCK * CHUNK) {
    for (int q = 0; q < CHUNK; ++q) prod[threadIdx.x * CHUNK + q] = ra[q] * rb[q];
    __syncthreads();
    if (c + BLOCK * CHUNK < m) {  // the next iteration's loads, in flight during the work below
      ap += BLOCK * CHUNK, bp += BLOCK * CHUNK, left -= BLOCK * CHUNK;
      load_pair(ap, bp, left, ra, rb);
    }
    for (int q = 0; q < CHUNK; ++q) sum += prod[((threadIdx.x + 1) % BLOCK) * CHUNK + q];
    __syncthreads();
  }
  if (blockIdx.x < n) out[blockIdx.x * BLOCK + threadIdx.x] = sum;
}
