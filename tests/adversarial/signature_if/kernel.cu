// Hostile: the parameter list has #if branches. The gate must not guess
// which parameters the compiled kernel takes: packing a float where the
// kernel reads a pointer would hand the GPU a forged address.
extern "C" __global__ void scale(int n,
#if USE_SCALE
                                 float a,
#endif
                                 float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] *= 2.0f;
}
