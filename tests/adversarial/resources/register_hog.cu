// verdict: launch_error (a block of 1024 threads whose registers the sm_90 register file cannot hold: it runs on emu, never on the device)
// A saxpy that keeps 96 loaded values live in registers, at a block of
// 1024 threads: 65,536 registers a block hold at most 64 a thread, and
// ptxas gives it more. Every output is right; no launch on the GPU would
// start. An emu accepting it would hand the user a kernel that cannot run.
// @kl launch grid(cdiv(n, 1024)) block(1024)
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * 1024 + threadIdx.x;
  if (i >= n) return;
  float v[96];
#pragma unroll
  for (int k = 0; k < 96; ++k) v[k] = x[(i + k) % n];
  // every value is read again after all were loaded: all stay live
  float keep = 1.0f;
#pragma unroll
  for (int k = 0; k < 96; ++k) keep = keep * v[k] + 1.0f;
#pragma unroll
  for (int k = 95; k >= 0; --k) keep = keep * v[k] - 1.0f;
  // keep is added as zero times itself: the result stays a*x + y
  y[i] = a * x[i] + y[i] + 0.0f * keep;
}
