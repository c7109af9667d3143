// y = A x with A in CSR (row_ptr, col_idx, vals). Naive ("scalar CSR"):
// one thread per row walking its nonzeros, so a warp's loads of vals and
// col_idx are scattered over 32 rows and its loads of x are gathers.
// @kl launch grid(cdiv(R, BLOCK)) block(BLOCK)
#define BLOCK 128

extern "C" __global__ void spmv_csr(int R, int C, int NNZ, const int *row_ptr, const int *col_idx,
                                    const float *vals, const float *x, float *y) {
  int r = blockIdx.x * BLOCK + threadIdx.x;
  if (r >= R) return;
  float sum = 0.0f;
  for (int k = row_ptr[r]; k < row_ptr[r + 1]; ++k) sum += vals[k] * x[col_idx[k]];
  y[r] = sum;
}
