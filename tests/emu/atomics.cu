// Atomics that count, from many blocks spread over host threads.
extern "C" __global__ void histogram(const int *in, int n, unsigned *bins, int nbins) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&bins[in[i] % nbins], 1u);
}

// stats: [0] atomicMax, [1] atomicMin, [2] atomicInc wrapping at 1000,
// [3] count of CAS winners on a flag, [4] atomicSub from 1e6, [5] atomicOr bits
extern "C" __global__ void misc(const int *in, int n, int *stats, unsigned *inc, int *flag,
                                float *fsum, unsigned long long *wide) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomicMax(&stats[0], in[i]);
  atomicMin(&stats[1], in[i]);
  atomicInc(inc, 999u);
  if (atomicCAS(flag, 0, i + 1) == 0) atomicAdd(&stats[3], 1);
  atomicSub(&stats[4], 1);
  atomicOr(&stats[5], 1 << (in[i] & 15));
  atomicAdd(fsum, 0.5f);
  atomicAdd(wide, (unsigned long long)in[i]);
  atomicExch(&stats[6], 7);
}
