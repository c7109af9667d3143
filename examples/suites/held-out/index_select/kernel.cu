// index_select along columns: out[r][j] = x[r][index[j]] for a rows x cols
// matrix x (row-major) and k 64-bit column indices, as
// torch.index_select(x, 1, index). Naive: one thread per output from a flat
// 64-bit index, each reloading its column index.
// @kl launch grid(cdiv(rows * k, 256)) block(256)

extern "C" __global__ void index_select(int rows, int cols, int k, const long long *index, const float *x, float *out) {
  long long t = (long long)blockIdx.x * 256 + threadIdx.x;
  if (t >= (long long)rows * k) return;
  long long r = t / k, j = t % k;
  out[t] = x[r * cols + index[j]];
}
