// v0: the naive baseline: one thread per element, reading the input row-wise (coalesced) and writing the output column-wise (a stride of `rows` floats between neighbouring threads).
// out (cols x rows) = transpose of in (rows x cols), both row-major.
// @kl launch grid(cdiv(cols, TILE), cdiv(rows, TILE)) block(TILE, TILE)
#define TILE 32

extern "C" __global__ void transpose(int rows, int cols, const float *in,
                                     float *out) {
  int c = blockIdx.x * TILE + threadIdx.x;
  int r = blockIdx.y * TILE + threadIdx.y;
  if (r < rows && c < cols) out[c * rows + r] = in[r * cols + c];
}
