// One BFS level: each vertex of the current depth labels its unvisited neighbours.
// @kl launch grid(cdiv(V, BLOCK)) block(BLOCK)
#define BLOCK 256

extern "C" __global__ void bfs(int V, int depth, const int *graph, int *level, int *count) {
  for (int v = blockIdx.x * BLOCK + threadIdx.x; v < V; v += gridDim.x * BLOCK) {
    if (level[v] != depth) continue;
    const int *row = graph, *col = graph + V + 1;
    bool labelled = false;
    for (int e = row[v]; e < row[v + 1]; ++e) {
      int u = col[e];
      if (level[u] == -1) {
        level[u] = depth + 1;
        labelled = true;
      }
    }
    if (!labelled) continue;
    count[0] = 1;
  }
}
