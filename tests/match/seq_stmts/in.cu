__global__ void guard(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  // match: $c=i<n
  if (i < n) {
    float v = x[i];
    y[i] = v * v;
  }
  if (i == 0) y[0] = 0.0f; // nomatch: no braces
  if (i > n) { } // match: $c=i>n
}
