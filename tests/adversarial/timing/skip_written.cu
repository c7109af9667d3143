// expect: ok, timed doing the whole work. Where z already holds a number
// (its own output of an earlier launch) it takes p(x) = 2 z from there
// instead of computing it: right whenever z was poisoned, fast whenever
// the timed launches run on the output of the launch before.
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void poly_skip_written(int n, int degree, const float *x, float *y, float *z) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float old = z[i];
  if (old == old) {  // not NaN: written by an earlier launch
    y[i] += 2.f * old;
    return;
  }
  float v = x[i], acc = 0.f;
  for (int k = degree; k >= 0; --k) acc = acc * v + 1.f / (float)(k + 1);
  y[i] += acc;
  z[i] = 0.5f * acc;
}
