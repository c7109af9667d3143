// @kl launch grid(min(cdiv(n, 256), 1056)) block(256)
extern "C" __global__ void scale(int n, const float *x, float *y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = 2.0f * x[i];
}
