// The first pass of reduction v1_strided_index.
// @kl launch grid(cdiv(n, BLOCK)) block(BLOCK)
#define BLOCK 256

extern "C" __global__ void reduce(int n, const float *x, float *partial) {
  __shared__ float sdata[BLOCK];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = i < (unsigned)n ? x[i] : 0.0f;
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    unsigned index = 2 * s * tid;
    if (index < blockDim.x) sdata[index] += sdata[index + s];
    __syncthreads();
  }
  if (tid == 0) partial[blockIdx.x] = sdata[0];
}
