// v1: shared-memory tile: the block reads a TILE x TILE tile row-wise into shared memory and writes it back transposed, so both the global reads and the global writes are coalesced.
// out (cols x rows) = transpose of in (rows x cols), both row-major.
// @kl launch grid(cdiv(cols, TILE), cdiv(rows, TILE)) block(TILE, TILE)
#define TILE 32

extern "C" __global__ void transpose(int rows, int cols, const float *in,
                                     float *out) {
  __shared__ float tile[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int c = blockIdx.x * TILE + tx;
  int r = blockIdx.y * TILE + ty;
  if (r < rows && c < cols) tile[ty][tx] = in[r * cols + c];
  __syncthreads();
  // Output element (blockIdx.x * TILE + ty, blockIdx.y * TILE + tx): a warp
  // writes TILE consecutive floats of one output row.
  int out_r = blockIdx.x * TILE + ty;  // an input column
  int out_c = blockIdx.y * TILE + tx;  // an input row
  if (out_r < cols && out_c < rows) out[out_r * rows + out_c] = tile[tx][ty];
}
