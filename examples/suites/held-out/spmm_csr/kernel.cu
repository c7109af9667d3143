// Sparse times dense, C = A B: A is R x K in CSR (row_ptr, col_idx, vals),
// B is K x N and C is R x N, both row-major. Naive: one thread per element
// of C on a 2D grid (the column of B and C on threadIdx.x), each walking
// its row's nonzeros; the threads of a row reload the same col_idx and
// vals from global memory.
// @kl launch grid(cdiv(N, 32), cdiv(R, 8)) block(32, 8)

extern "C" __global__ void spmm_csr(int R, int K, int N, int NNZ, const int *row_ptr, const int *col_idx,
                                    const float *vals, const float *B, float *C) {
  int col = blockIdx.x * 32 + threadIdx.x;
  int row = blockIdx.y * 8 + threadIdx.y;
  if (row >= R || col >= N) return;
  float acc = 0.0f;
  for (int e = row_ptr[row]; e < row_ptr[row + 1]; ++e) acc += vals[e] * B[(long)col_idx[e] * N + col];
  C[(long)row * N + col] = acc;
}
