// The C reference of permute3d: out[c][a][b] = in[a][b][c].
void reference(int A, int B, int C, const float *in, float *out) {
  for (long a = 0; a < A; ++a)
    for (long b = 0; b < B; ++b)
      for (long c = 0; c < C; ++c) out[(c * A + a) * B + b] = in[(a * B + b) * C + c];
}
