// Permute the axes of a 3D tensor, (A, B, C) -> (C, A, B), both row-major:
// out[c][a][b] = in[a][b][c], as x.permute(2, 0, 1).contiguous(). Naive:
// one thread per output element from a flat index, so a warp writes 32
// consecutive b and reads them C floats apart.
// @kl launch grid(cdiv(A * B * C, 256)) block(256)

extern "C" __global__ void permute3d(int A, int B, int C, const float *in, float *out) {
  unsigned long long o = blockIdx.x * 256ull + threadIdx.x;
  if (o >= (unsigned long long)A * B * C) return;
  int b = o % B;
  int a = (o / B) % A;
  int c = o / ((unsigned long long)A * B);
  out[o] = in[((unsigned long long)a * B + b) * C + c];
}
