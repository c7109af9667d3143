// Column sums s[c] = sum over r of a[r][c]. Naive: one thread per column
// walking every row, so only `cols` threads run, each a long serial
// chain of dependent additions (the loads are coalesced across a warp).
// @kl launch grid(cdiv(cols, BLOCK)) block(BLOCK)
#define BLOCK 256

extern "C" __global__ void colsum(int rows, int cols, const float *a, float *s) {
  int c = blockIdx.x * BLOCK + threadIdx.x;
  if (c >= cols) return;
  float sum = 0.0f;
  for (int r = 0; r < rows; ++r) sum += a[(long)r * cols + c];
  s[c] = sum;
}
