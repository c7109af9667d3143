// Scatter-add: out[index[i]] += src[i] for n values into `bins` floats
// (out starts at zero: the spec's init, as a user's cudaMemset would).
// Naive: one thread per value, each a float atomicAdd on global memory.
// @kl launch grid(cdiv(n, 256)) block(256)

extern "C" __global__ void scatter_add(int n, int bins, const int *index, const float *src, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out + index[i], src[i]);
}
