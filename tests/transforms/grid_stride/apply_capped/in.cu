// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void scale(int n, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}
