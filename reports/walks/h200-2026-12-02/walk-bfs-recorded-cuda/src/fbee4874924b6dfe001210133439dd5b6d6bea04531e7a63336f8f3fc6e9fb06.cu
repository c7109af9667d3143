// v2: warp-cooperative neighbour gathering: one warp per frontier vertex, its 32 lanes reading the adjacency list in coalesced strides, instead of one thread walking a whole list serially.
// Level-synchronous BFS from vertex 0 on a CSR graph (graph = V + 1 row
// offsets, then the column indices). level[v] = distance, -1 unreached.
// qa holds the frontier (frontier entries), qb receives the next one and
// count[0] its size.
// @kl launch grid(cdiv(frontier, WARPS)) block(BLOCK)
// @kl launch(bfs_init) grid(cdiv(V, BLOCK)) block(BLOCK)
#define BLOCK 256
#define WARPS 8  // warps per block: one frontier vertex each

static_assert(WARPS * 32 == BLOCK, "one warp per frontier vertex");

extern "C" __global__ void bfs_init(int V, int depth, int frontier, const int *graph,
                                    int *level, int *qa, int *qb, int *count, unsigned *bits) {
  int v = blockIdx.x * BLOCK + threadIdx.x;
  if (v < V) level[v] = v == 0 ? 0 : -1;
  if (v == 0) qa[0] = 0;
}

extern "C" __global__ void bfs(int V, int depth, int frontier, const int *graph,
                               int *level, int *qa, int *qb, int *count, unsigned *bits) {
  int warp = (blockIdx.x * BLOCK + threadIdx.x) / 32, lane = threadIdx.x % 32;
  if (warp >= frontier) return;
  const int *row = graph, *col = graph + V + 1;
  int v = qa[warp];
  int end = row[v + 1];
  for (int e = row[v] + lane; e < end; e += 32) {
    int u = col[e];
    if (atomicCAS(&level[u], -1, depth + 1) == -1) qb[atomicAdd(&count[0], 1)] = u;
  }
}
