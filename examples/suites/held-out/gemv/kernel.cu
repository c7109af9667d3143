// y = A x, A row-major M x N. Naive: one thread per row with its own dot
// product, so neighbouring threads read A a whole row (N floats) apart.
// @kl launch grid(cdiv(M, BLOCK)) block(BLOCK)
#define BLOCK 128

extern "C" __global__ void gemv(int M, int N, const float *A, const float *x, float *y) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i >= M) return;
  float sum = 0.0f;
  for (int j = 0; j < N; ++j) sum += A[(long)i * N + j] * x[j];
  y[i] = sum;
}
