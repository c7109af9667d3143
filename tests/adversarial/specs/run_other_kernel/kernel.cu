// saxpy, and a kernel with the same parameters that does nothing.
// @kl launch grid(cdiv(n, 256)) block(256)
// @kl launch(noop) grid(1) block(1)
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void noop(int n, float a, const float *x, float *y) {}
