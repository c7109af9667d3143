// Block maxima by an interleaved shared-memory tree.
// @kl launch grid(cdiv(n, BLOCK)) block(BLOCK)
#define BLOCK 128

extern "C" __global__ void block_max(int n, const float *x, float *out) {
  __shared__ float m[BLOCK];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + tid;
  m[tid] = i < n ? x[i] : -1e30f;
  __syncthreads();
  for (int s = 1; s < blockDim.x; s *= 2) {
    if (tid % (2 * s) == 0) m[tid] = fmaxf(m[tid], m[tid + s]);
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = m[0];
}
