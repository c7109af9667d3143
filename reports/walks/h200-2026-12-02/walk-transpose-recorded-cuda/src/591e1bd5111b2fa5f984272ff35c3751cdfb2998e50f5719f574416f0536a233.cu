// v2: padding: the shared tile gets one extra column ([TILE][TILE + 1]), so the column-wise reads of the transposed write hit 32 different banks instead of one.
// out (cols x rows) = transpose of in (rows x cols), both row-major.
// @kl launch grid(cdiv(cols, TILE), cdiv(rows, TILE)) block(TILE, TILE)
#define TILE 32

extern "C" __global__ void transpose(int rows, int cols, const float *in,
                                     float *out) {
  __shared__ float tile[TILE][TILE + 1];
  int tx = threadIdx.x, ty = threadIdx.y;
  int c = blockIdx.x * TILE + tx;
  int r = blockIdx.y * TILE + ty;
  if (r < rows && c < cols) tile[ty][tx] = in[r * cols + c];
  __syncthreads();
  int out_r = blockIdx.x * TILE + ty;
  int out_c = blockIdx.y * TILE + tx;
  if (out_r < cols && out_c < rows) out[out_r * rows + out_c] = tile[tx][ty];
}
