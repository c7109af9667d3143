// y = a * x over n floats; a grid-stride loop, and a running maximum of x.
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void scale(int n, float a, const float *x, float *y,
                                 float *peak) {
  float m = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    y[i] = a * x[i];
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    m = fmaxf(m, x[i]);
  atomicMax((int *)peak, __float_as_int(m));
}
