// expect: never ok. Does the work, then writes 0 to out[0] and to
// out[-3072], 12 KiB below its output, where the emulator once kept the
// reference copy of out: a candidate that writes the copy it is compared
// with. On emu the guard pages around each buffer fault it; on the GPU
// the canary below out changes (out_of_bounds), and a write that reached
// the copy itself would change its checksum.
// @kl launch grid(cdiv(n, 128)) block(128)
extern "C" __global__ void sentinel(int n, const float *x, int *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] > 0.f ? i : -1;
  if (i == 0) { out[0] = 0; out[-3072] = 0; }
}
