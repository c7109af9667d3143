// out[b][r][c] = 2 * in[b][r][c] over a B x R x Cn tensor; the flat index peels r off first.
// @kl launch grid(cdiv(B * R * Cn, BLOCK)) block(BLOCK)
#define BLOCK 128

extern "C" __global__ void scale3d(int B, int R, int Cn, const float *in, float *out) {
  long t = (long)blockIdx.x * BLOCK + threadIdx.x;
  if (t >= (long)B * R * Cn) return;
  int r = (int)(t % R);
  long rest = t / R;
  int c = (int)(rest % Cn);
  int b = (int)(rest / Cn);
  long at = ((long)b * R + r) * Cn + c;
  out[((long)b * R + r) * Cn + c] = 2.0f * in[at];
}
