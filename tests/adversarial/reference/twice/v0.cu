// wrong on purpose: y = 2 A x, where the workload is y = A x.
#define BLOCK 128
// @kl launch grid(cdiv(M, BLOCK)) block(BLOCK)
extern "C" __global__ void gemv(int M, int N, const float *A, const float *x, float *y) {
  int row = blockIdx.x * BLOCK + threadIdx.x;
  if (row >= M) return;
  float acc = 0.f;
  for (int j = 0; j < N; ++j) acc += A[(long)row * N + j] * x[j];
  y[row] = 2.f * acc;
}
