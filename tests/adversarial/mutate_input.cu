// expect: mutated_input. Correct output, but it scribbles over x.
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = a * x[i] + y[i];
    const_cast<float *>(x)[i] = 0.f;
  }
}
