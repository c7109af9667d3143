// The C reference of spmm_csr: each row of C as the sum, in double, of the
// rows of B its nonzeros select, scaled.
#include <stdlib.h>

void reference(int R, int K, int N, int NNZ, const int *row_ptr, const int *col_idx,
               const float *vals, const float *B, float *C) {
  double *acc = malloc((size_t)N * sizeof *acc);
  if (!acc) abort();
  for (long r = 0; r < R; ++r) {
    for (int n = 0; n < N; ++n) acc[n] = 0.0;
    for (int e = row_ptr[r]; e < row_ptr[r + 1]; ++e)
      for (int n = 0; n < N; ++n) acc[n] += (double)vals[e] * (double)B[(long)col_idx[e] * N + n];
    for (int n = 0; n < N; ++n) C[r * N + n] = (float)acc[n];
  }
  free(acc);
  (void)K; (void)NNZ;
}
