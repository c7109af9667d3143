// The C reference of nearest_neighbor: for each query, the first reference
// point at the least squared distance (computed in 64-bit integers).
void reference(int Q, int R, const int *query, const int *ref, int *nearest) {
  for (long q = 0; q < Q; ++q) {
    long best = 0;
    long long best_d = -1;
    for (long r = 0; r < R; ++r) {
      long long d = 0;
      for (int k = 0; k < 3; ++k) {
        long long diff = (long long)ref[3 * r + k] - query[3 * q + k];
        d += diff * diff;
      }
      if (best_d < 0 || d < best_d) {
        best_d = d;
        best = r;
      }
    }
    nearest[q] = (int)best;
  }
}
