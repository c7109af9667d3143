__global__ void hist(const int *in, int *bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd_block(&bins[in[i]], 1); // match: $ARGS=&bins[in[i]],1
  atomicMax(&bins[0], i); // nomatch: another atomic
  int old = atomicAdd_block(bins + 1, 2); // match: $ARGS=bins+1,2
}
