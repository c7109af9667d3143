// v3: several elements per thread: a TILE x BLOCK_ROWS block moves the TILE x TILE tile in TILE / BLOCK_ROWS row steps, so each thread has several independent loads in flight and index math is amortized.
// out (cols x rows) = transpose of in (rows x cols), both row-major.
// @kl launch grid(cdiv(cols, TILE), cdiv(rows, TILE)) block(TILE, BLOCK_ROWS)
#define TILE 32
#define BLOCK_ROWS 8

static_assert(TILE % BLOCK_ROWS == 0, "the block must step through the tile evenly");

extern "C" __global__ void transpose(int rows, int cols, const float *in,
                                     float *out) {
  __shared__ float tile[TILE][TILE + 1];
  int tx = threadIdx.x, ty = threadIdx.y;
  int c = blockIdx.x * TILE + tx;
  int r = blockIdx.y * TILE + ty;
#pragma unroll
  for (int k = 0; k < TILE; k += BLOCK_ROWS)
    if (r + k < rows && c < cols) tile[ty + k][tx] = in[(r + k) * cols + c];
  __syncthreads();
  int out_r = blockIdx.x * TILE + ty;
  int out_c = blockIdx.y * TILE + tx;
#pragma unroll
  for (int k = 0; k < TILE; k += BLOCK_ROWS)
    if (out_r + k < cols && out_c < rows)
      out[(out_r + k) * rows + out_c] = tile[tx][ty + k];
}
