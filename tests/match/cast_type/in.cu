__global__ void conv(const int *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float scale = (float)n; // match: $T=float $X=n
  out[i] = (float)in[i] / scale; // match: $T=float
  double d = (double)(i + 1); // match: $T=double $X=(i+1)
  out[0] = (scale); // nomatch: parentheses, not a cast
}
