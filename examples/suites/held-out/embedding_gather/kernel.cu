// out[t][d] = table[ids[t]][d]. Naive: one thread per output element, the
// token index on threadIdx.x, so a warp touches 32 different rows of the
// table (and of out) one float each, and every thread reloads its id.
// @kl launch grid(cdiv(T, B), cdiv(D, B)) block(B, B)
#define B 16

extern "C" __global__ void embedding_gather(int T, int V, int D, const int *ids, const float *table, float *out) {
  int t = blockIdx.x * B + threadIdx.x;
  int d = blockIdx.y * B + threadIdx.y;
  if (t >= T || d >= D) return;
  out[(long)t * D + d] = table[(long)ids[t] * D + d];
}
