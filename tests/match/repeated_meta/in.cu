__global__ void axpy(float *y, const float *x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = y[i] + s * x[i]; // match: $a=y[i] $b=s*x[i]
  y[i] = y [ i ] /* spaced */ + 1.0f; // match: $a=y[i]
  y[i] = y[i + 1] + 1.0f; // nomatch: another element
  s = x[i] + s; // nomatch: the repeated operand is on the right
}
