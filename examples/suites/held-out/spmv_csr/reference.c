// The C reference of spmv_csr: each row's products summed in double.
void reference(int R, int C, int NNZ, const int *row_ptr, const int *col_idx,
               const float *vals, const float *x, float *y) {
  for (int r = 0; r < R; ++r) {
    double sum = 0.0;
    for (int k = row_ptr[r]; k < row_ptr[r + 1]; ++k) sum += (double)vals[k] * (double)x[col_idx[k]];
    y[r] = (float)sum;
  }
  (void)C; (void)NNZ;
}
