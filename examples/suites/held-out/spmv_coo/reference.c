// The C reference of spmv_coo: each row's products summed in double, from zero.
#include <stdlib.h>

void reference(int R, int C, int nnz, const int *row, const int *col, const float *val,
               const float *x, float *y) {
  double *sum = calloc((size_t)R, sizeof *sum);
  if (!sum) abort();
  for (int k = 0; k < nnz; ++k) sum[row[k]] += (double)val[k] * (double)x[col[k]];
  for (int r = 0; r < R; ++r) y[r] = (float)sum[r];
  free(sum);
  (void)C;
}
