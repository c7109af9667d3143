// v4: vectorized access: each thread's four elements become four neighbouring columns moved with one float4 load and one float4 store, instead of four scalar accesses.
// out (cols x rows) = transpose of in (rows x cols), both row-major.
// A float4 starts every 4 floats of a row, so rows and cols must be multiples of 4.
// @kl launch grid(cdiv(cols, TILE), cdiv(rows, TILE)) block(cdiv(TILE, 4), TILE)
// @kl requires rows % 4 == 0 && cols % 4 == 0
#define TILE 32

static_assert(TILE % 4 == 0, "a tile row must hold whole float4");

extern "C" __global__ void transpose(int rows, int cols, const float *in,
                                     float *out) {
  __shared__ float tile[TILE][TILE + 1];  // padded: see v2
  int tx = threadIdx.x, ty = threadIdx.y;
  int c = blockIdx.x * TILE + tx * 4;  // first of the thread's 4 input columns
  int r = blockIdx.y * TILE + ty;
  // cols % 4 == 0, so c < cols means all four columns are inside.
  if (r < rows && c < cols) {
    float4 v = *reinterpret_cast<const float4 *>(&in[r * cols + c]);
    tile[ty][tx * 4 + 0] = v.x;
    tile[ty][tx * 4 + 1] = v.y;
    tile[ty][tx * 4 + 2] = v.z;
    tile[ty][tx * 4 + 3] = v.w;
  }
  __syncthreads();
  int out_r = blockIdx.x * TILE + ty;      // an input column
  int out_c = blockIdx.y * TILE + tx * 4;  // first of 4 input rows
  if (out_r < cols && out_c < rows) {
    float4 v = make_float4(tile[tx * 4 + 0][ty], tile[tx * 4 + 1][ty],
                           tile[tx * 4 + 2][ty], tile[tx * 4 + 3][ty]);
    *reinterpret_cast<float4 *>(&out[out_r * rows + out_c]) = v;
  }
}
