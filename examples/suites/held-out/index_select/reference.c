// The C reference of index_select: each output row copies the selected
// columns of its input row.
void reference(int rows, int cols, int k, const long long *index, const float *x, float *out) {
  for (long r = 0; r < rows; ++r)
    for (long j = 0; j < k; ++j) out[r * k + j] = x[r * cols + index[j]];
}
