// expect: wrong, judged against itself. Writes out[i] only where x[i] > 0
// and leaves the -1 elements to whatever the buffer held: when the
// baseline's run and the candidate's start from the same poison, an
// element that neither writes compares equal.
// @kl launch grid(cdiv(n, 128)) block(128)
extern "C" __global__ void sentinel(int n, const float *x, int *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] > 0.f) out[i] = i;
}
