// C[b] = A[b] B[b] for a batch of small row-major matrices (A[b] M x K,
// B[b] K x N). Naive: one thread per element of C from a flat index, each
// reading its row of A[b] and column of B[b] from global memory; nothing
// is shared between the threads of one matrix.
// @kl launch grid(cdiv(batch * M * N, BLOCK)) block(BLOCK)
#define BLOCK 256

extern "C" __global__ void batched_gemm(int batch, int M, int N, int K, const float *A, const float *B, float *C) {
  long t = (long)blockIdx.x * BLOCK + threadIdx.x;
  if (t >= (long)batch * M * N) return;
  int j = (int)(t % N);
  int i = (int)(t / N % M);
  long b = t / ((long)M * N);
  const float *a = A + b * M * K;
  const float *bm = B + b * K * N;
  float sum = 0.0f;
  for (int p = 0; p < K; ++p) sum += a[i * K + p] * bm[p * N + j];
  C[t] = sum;
}
