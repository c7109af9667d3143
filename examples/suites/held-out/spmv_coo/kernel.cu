// Sparse matrix times vector with A in COO: nnz triplets (row[k], col[k],
// val[k]) in any order, repeats summed; y starts at zero (the spec's init)
// and y[row[k]] += val[k] * x[col[k]]. Naive: one thread per nonzero, each
// a float atomicAdd on global memory.
// @kl launch grid(cdiv(nnz, 128)) block(128)

extern "C" __global__ void spmv_coo(int R, int C, int nnz, const int *row, const int *col, const float *val,
                                    const float *x, float *y) {
  int k = blockIdx.x * 128 + threadIdx.x;
  if (k < nnz) atomicAdd(&y[row[k]], val[k] * x[col[k]]);
}
