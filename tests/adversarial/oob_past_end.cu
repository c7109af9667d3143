// expect: out_of_bounds. Right answer, and one write past the end of y:
// on a GPU that lands in whatever lies beyond, silently; the canary past
// every buffer makes it a verdict (on emu the guard page faults it).
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
  if (i == 0) y[n + 5] = 1.f;
}
