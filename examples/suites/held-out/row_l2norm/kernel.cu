// The Euclidean norm of each row of a rows x cols matrix (row-major):
// norm[row] = sqrt(x[row][0]^2 + ... + x[row][cols-1]^2). Naive: one thread
// per row summing its squares serially, so a warp's loads are a whole row
// apart and only `rows` threads run.
// @kl launch grid(cdiv(rows, 256)) block(256)

extern "C" __global__ void row_l2norm(int rows, int cols, const float *x, float *norm) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    float acc = 0.f;
    for (int col = 0; col < cols; col++) {
      float v = x[(size_t)row * cols + col];
      acc += v * v;
    }
    norm[row] = sqrtf(acc);
  }
}
