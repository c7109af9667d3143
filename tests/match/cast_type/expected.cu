__global__ void conv(const int *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float scale = static_cast<float>(n); // match: $T=float $X=n
  out[i] = static_cast<float>(in[i]) / scale; // match: $T=float
  double d = static_cast<double>((i + 1)); // match: $T=double $X=(i+1)
  out[0] = (scale); // nomatch: parentheses, not a cast
}
