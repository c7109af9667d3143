// v1: frontier queue with atomics: a level launches one thread per frontier vertex only, and a neighbour is claimed with atomicCAS on its level and appended to the next frontier with atomicAdd, so a level costs the frontier's edges instead of all V vertices.
// Level-synchronous BFS from vertex 0 on a CSR graph (graph = V + 1 row
// offsets, then the column indices). level[v] = distance, -1 unreached.
// qa holds the frontier (frontier entries), qb receives the next one and
// count[0] its size.
// @kl launch grid(cdiv(frontier, BLOCK)) block(BLOCK)
// @kl launch(bfs_init) grid(cdiv(V, BLOCK)) block(BLOCK)
#define BLOCK 256

extern "C" __global__ void bfs_init(int V, int depth, int frontier, const int *graph,
                                    int *level, int *qa, int *qb, int *count, unsigned *bits) {
  int v = blockIdx.x * BLOCK + threadIdx.x;
  if (v < V) level[v] = v == 0 ? 0 : -1;
  if (v == 0) qa[0] = 0;
  if (v < (V + 31) / 32) bits[v] = v == 0 ? 1u : 0u;  // only the source is visited
}

// Claims u for this level: true for exactly one caller per vertex.
__device__ __forceinline__ bool claim(unsigned *bits, int u) {
  unsigned mask = 1u << (u % 32);
  // A stale read can only miss a bit that is being set; the atomic decides.
  if (bits[u / 32] & mask) return false;
  return (atomicOr(&bits[u / 32], mask) & mask) == 0;
}

// Labels a claimed neighbour and appends it to the next frontier.
__device__ __forceinline__ void visit(int u, int depth, unsigned *bits, int *level, int *qb, int *count) {
  if (claim(bits, u)) {
    level[u] = depth + 1;
    qb[atomicAdd(&count[0], 1)] = u;
  }
}

extern "C" __global__ void bfs(int V, int depth, int frontier, const int *graph,
                               int *level, int *qa, int *qb, int *count, unsigned *bits) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i >= frontier) return;
  const int *row = graph, *col = graph + V + 1;
  int v = qa[i];
  for (int e = row[v]; e < row[v + 1]; ++e) {
    int u = col[e];
    visit(u, depth, bits, level, qb, count);
  }
}
