// @kl launch grid(cdiv(V, BLOCK)) block(BLOCK)
#define BLOCK 128

extern "C" __global__ void relax(int V, const int *dist_in, int *dist_out) {
  int v = blockIdx.x * BLOCK + threadIdx.x;
  if (v < V) dist_out[v] = min(dist_in[v], v > 0 ? dist_in[v - 1] + 1 : dist_in[v]);
}
