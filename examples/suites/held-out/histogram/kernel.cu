// A 256-bin histogram: bins[data[i]] += 1 for every byte (bins start at
// zero). Naive: one thread per byte, each an atomicAdd on the global bins,
// so threads with equal bytes contend for one address.
// @kl launch grid(cdiv(n, BLOCK)) block(BLOCK)
#define BLOCK 256

extern "C" __global__ void histogram(int n, const unsigned char *data, unsigned int *bins) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) atomicAdd(&bins[data[i]], 1u);
}
