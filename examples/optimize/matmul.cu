// A first matrix product, as a user might write it: one thread per element
// of c, with the row on threadIdx.x. c = a * b, row-major, a is rows x inner,
// b is inner x cols. `klineage optimize` starts from here (make run).
// @kl launch grid(cdiv(rows, TILE), cdiv(cols, TILE)) block(TILE, TILE)
#define TILE 32

extern "C" __global__ void matmul(int rows, int cols, int inner, const float *a, const float *b, float *c) {
  int i = blockIdx.x * TILE + threadIdx.x;
  int j = blockIdx.y * TILE + threadIdx.y;
  if (i < rows && j < cols) {
    float sum = 0.0f;
    for (int p = 0; p < inner; ++p)
      sum += a[i * inner + p] * b[p * cols + j];
    c[i * cols + j] = sum;
  }
}
