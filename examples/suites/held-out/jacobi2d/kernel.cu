// One Jacobi sweep: v[i][j] = (u[i-1][j] + u[i+1][j] + u[i][j-1] + u[i][j+1]) / 4
// inside the grid, v = u on its boundary. Naive: one thread per point, the
// row index on threadIdx.x, so a warp reads 32 points a row apart.
// @kl launch grid(cdiv(rows, BX), cdiv(cols, BY)) block(BX, BY)
#define BX 16
#define BY 16

extern "C" __global__ void jacobi2d(int rows, int cols, const float *u, float *v) {
  int i = blockIdx.x * BX + threadIdx.x;
  int j = blockIdx.y * BY + threadIdx.y;
  if (i >= rows || j >= cols) return;
  long at = (long)i * cols + j;
  if (i == 0 || j == 0 || i == rows - 1 || j == cols - 1) {
    v[at] = u[at];
    return;
  }
  v[at] = 0.25f * (u[at - cols] + u[at + cols] + u[at - 1] + u[at + 1]);
}
