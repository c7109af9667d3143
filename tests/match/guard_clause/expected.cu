// A guard clause: the body of a bounds check moves out of the if, behind
// an early return (the if is the kernel's last statement).
__global__ void scale(float *y, const float *x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  // match: $c=i<n
  if (!(i < n)) return;
  float v = x[i];
  y[i] = s * v;
}
__global__ void clamp(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fminf(y[i], 1.0f); // nomatch: no block
}
