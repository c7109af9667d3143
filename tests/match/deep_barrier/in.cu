// A barrier anywhere inside a conditional: `...` looks into nested
// statements (here a loop) and climbs back out to the if's block.
__global__ void divergent(float *a, int n) {
  // match: $c=threadIdx.x<16
  if (threadIdx.x < 16) {
    a[0] = 1.0f;
    for (int i = 0; i < n; ++i) {
      a[i] += 1.0f;
      __syncthreads();
    }
    a[1] = 2.0f;
  }
  if (n > 0) { // nomatch: no barrier inside
    a[2] = 3.0f;
  }
  // match: $c=n>1
  if (n > 1) {
    __syncthreads();
  }
  __syncthreads(); // nomatch: not in a conditional
}
