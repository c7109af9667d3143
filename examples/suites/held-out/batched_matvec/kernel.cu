// A batch of matrix-vector products y[b] = A[b] x[b]: A[b] is rows x cols
// (row-major), stored one after the other; x[b] has cols floats and y[b]
// rows. Naive: one thread per output from a flat 64-bit index, each walking
// its row of A[b] from global memory (a warp's loads are a row apart).
// @kl launch grid(cdiv(batch * rows, NT)) block(NT)
#define NT 256

extern "C" __global__ void batched_matvec(int batch, int rows, int cols, const float *A, const float *x, float *y) {
  const long long tid = (long long)blockIdx.x * NT + threadIdx.x;
  if (tid >= (long long)batch * rows) return;
  const long long b = tid / rows;
  const int i = (int)(tid % rows);
  const float *a = A + (b * rows + i) * cols;
  const float *v = x + b * cols;
  float s = 0.0f;
  for (int j = 0; j < cols; ++j) s += a[j] * v[j];
  y[tid] = s;
}
