// The C reference of scatter_add: each bin's sum in double, from zero.
#include <stdlib.h>

void reference(int n, int bins, const int *index, const float *src, float *out) {
  double *sum = calloc((size_t)bins, sizeof *sum);
  if (!sum) abort();
  for (int i = 0; i < n; ++i) sum[index[i]] += src[i];
  for (int b = 0; b < bins; ++b) out[b] = (float)sum[b];
  free(sum);
}
