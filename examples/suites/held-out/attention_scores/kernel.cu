// Attention scores S[h][i][j] = (Q[h][i] . K[h][j]) / sqrt(D). Naive: one
// thread per score, the query index i on threadIdx.x, so a warp reads Q
// rows D floats apart and writes S a whole row (L floats) apart; every
// thread reads its D-long rows of Q and K from global memory.
// @kl launch grid(cdiv(L, T), cdiv(L, T), BH) block(T, T)
#define T 16

extern "C" __global__ void attention_scores(int BH, int L, int D, const float *Q, const float *K, float *S) {
  int i = blockIdx.x * T + threadIdx.x;
  int j = blockIdx.y * T + threadIdx.y;
  int h = blockIdx.z;
  if (i >= L || j >= L) return;
  const float *q = Q + ((long)h * L + i) * D;
  const float *k = K + ((long)h * L + j) * D;
  float dot = 0.0f;
  for (int d = 0; d < D; ++d) dot += q[d] * k[d];
  S[((long)h * L + i) * L + j] = dot / sqrtf((float)D);
}
