// expect: wrong. Half the elements, for half the time.
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n / 2) y[i] = a * x[i] + y[i];
}
