// @kl launch grid(cdiv(n, 256)) block(256)
// Two hops along a successor array: next[next[i]].
extern "C" __global__ void chase(int n, const int *next, const float *w, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int j = __ldg(&next[__ldg(&next[i])]);
  out[i] = w[i] + w[j];
}
