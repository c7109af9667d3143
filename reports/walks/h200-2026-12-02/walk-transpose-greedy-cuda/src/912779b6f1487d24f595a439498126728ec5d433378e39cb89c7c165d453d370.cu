// v6: a larger tile: TILE grows from 32 to 64 (and BLOCK_ROWS from 8 to 16, so each thread still moves TILE / BLOCK_ROWS = 4 float4), halving the tile-edge overhead per byte and quadrupling the bytes each block keeps in flight.
// out (cols x rows) = transpose of in (rows x cols), both row-major.
// @kl launch grid(cdiv(cols, TILE), cdiv(rows, TILE)) block(cdiv(TILE, 4), BLOCK_ROWS)
// @kl requires rows % 4 == 0 && cols % 4 == 0
#define TILE 64
#define BLOCK_ROWS 16

static_assert(TILE % 4 == 0 && TILE % BLOCK_ROWS == 0, "tile shape must match the block");

extern "C" __global__ void transpose(int rows, int cols, const float *in,
                                     float *out) {
  __shared__ float tile[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int c = blockIdx.x * TILE + tx * 4;
  int r = blockIdx.y * TILE + ty;
  float4 v[TILE / BLOCK_ROWS];
  // All loads first, then all shared stores: the loads overlap in flight.
  for (int k = 0; k < TILE / BLOCK_ROWS; ++k)
    if (r + k * BLOCK_ROWS < rows && c < cols)
      v[k] = *reinterpret_cast<const float4 *>(&in[(r + k * BLOCK_ROWS) * cols + c]);
  for (int k = 0; k < TILE / BLOCK_ROWS; ++k) {
    int tr = ty + k * BLOCK_ROWS;
    if (r + k * BLOCK_ROWS < rows && c < cols) {
      tile[tr][tx * 4 + 0] = v[k].x;
      tile[tr][tx * 4 + 1] = v[k].y;
      tile[tr][tx * 4 + 2] = v[k].z;
      tile[tr][tx * 4 + 3] = v[k].w;
    }
  }
  __syncthreads();
  int out_r = blockIdx.x * TILE + ty;
  int out_c = blockIdx.y * TILE + tx * 4;
  for (int k = 0; k < TILE / BLOCK_ROWS; ++k) {
    int tc = ty + k * BLOCK_ROWS;  // tile column = output row inside the tile
    if (out_r + k * BLOCK_ROWS < cols && out_c < rows) {
      float4 o = make_float4(tile[tx * 4 + 0][tc], tile[tx * 4 + 1][tc],
                             tile[tx * 4 + 2][tc], tile[tx * 4 + 3][tc]);
      *reinterpret_cast<float4 *>(&out[(out_r + k * BLOCK_ROWS) * rows + out_c]) = o;
    }
  }
}
