// v0: the naive baseline: every level launches one thread per vertex, and the vertices whose level equals the current depth label their unvisited neighbours; the work is O(V) per level whatever the frontier's size.
// Level-synchronous BFS from vertex 0 on a CSR graph (graph = V + 1 row
// offsets, then the column indices). level[v] = distance, -1 unreached.
// count[0] becomes nonzero when a level labelled any vertex.
// @kl launch grid(cdiv(V, BLOCK)) block(BLOCK)
// @kl launch(bfs_init) grid(cdiv(V, BLOCK)) block(BLOCK)
#define BLOCK 256

extern "C" __global__ void bfs_init(int V, int depth, int frontier, const int *graph,
                                    int *level, int *qa, int *qb, int *count, unsigned *bits) {
  int v = blockIdx.x * BLOCK + threadIdx.x;
  if (v < V) level[v] = v == 0 ? 0 : -1;
}

extern "C" __global__ void bfs(int V, int depth, int frontier, const int *graph,
                               int *level, int *qa, int *qb, int *count, unsigned *bits) {
  int v = blockIdx.x * BLOCK + threadIdx.x;
  if (v >= V || level[v] != depth) return;
  const int *row = graph, *col = graph + V + 1;
  bool labelled = false;
  for (int e = row[v]; e < row[v + 1]; ++e) {
    int u = col[e];
    // Two threads may both see -1 and both write depth + 1: the same value.
    if (level[u] == -1) {
      level[u] = depth + 1;
      labelled = true;
    }
  }
  if (labelled) count[0] = 1;
}
