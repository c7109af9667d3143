// @kl launch grid(cdiv(n, 256)) block(256)
#define TM 4
#define TN 4
extern "C" __global__ void tile(int n, const float *x, float *y) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * TM * TN;
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
    for (int j = 0; j < TN; ++j) acc[i][j] = base + i * TN + j < n ? x[base + i * TN + j] : 0.0f;
  for (int i = 0; i < TM; ++i)
    for (int j = 0; j < TN; ++j)
      if (base + i * TN + j < n) y[base + i * TN + j] = 2.0f * acc[i][j];
}
