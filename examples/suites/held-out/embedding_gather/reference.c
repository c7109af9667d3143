// The C reference of embedding_gather: each token's row copied from the table.
void reference(int T, int V, int D, const int *ids, const float *table, float *out) {
  for (long t = 0; t < T; ++t)
    for (int d = 0; d < D; ++d) out[t * D + d] = table[(long)ids[t] * D + d];
  (void)V;
}
