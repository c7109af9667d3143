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
}

extern "C" __global__ void bfs(int V, int depth, int frontier, const int *graph,
                               int *level, int *qa, int *qb, int *count, unsigned *bits) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i >= frontier) return;
  const int *row = graph, *col = graph + V + 1;
  int v = qa[i];
  for (int e = row[v]; e < row[v + 1]; ++e) {
    int u = col[e];
    if (atomicCAS(&level[u], -1, depth + 1) == -1) qb[atomicAdd(&count[0], 1)] = u;
  }
}
