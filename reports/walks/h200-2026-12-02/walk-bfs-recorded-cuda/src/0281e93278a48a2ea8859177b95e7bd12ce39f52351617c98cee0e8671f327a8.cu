// v3: scan-based neighbour gathering: each thread takes one frontier vertex, a block-wide prefix sum of their degrees lays the block's adjacency lists end to end, and the block reads that concatenation BLOCK edges at a time, so every lane has an edge whatever the degrees.
// Level-synchronous BFS from vertex 0 on a CSR graph (graph = V + 1 row
// offsets, then the column indices). level[v] = distance, -1 unreached.
// qa holds the frontier (frontier entries), qb receives the next one and
// count[0] its size.
// @kl launch grid(cdiv(frontier, BLOCK)) block(BLOCK)
// @kl launch(bfs_init) grid(cdiv(V, BLOCK)) block(BLOCK)
#define BLOCK 256
#define WARPS (BLOCK / 32)
#define FULL 0xffffffffu

extern "C" __global__ void bfs_init(int V, int depth, int frontier, const int *graph,
                                    int *level, int *qa, int *qb, int *count, unsigned *bits) {
  int v = blockIdx.x * BLOCK + threadIdx.x;
  if (v < V) level[v] = v == 0 ? 0 : -1;
  if (v == 0) qa[0] = 0;
}

// Inclusive prefix sum of x over the block (shuffles inside each warp, one
// shared slot per warp); *total gets the block's sum. Every thread calls it.
__device__ __forceinline__ int block_scan(int x, int *warp_sums, int *total) {
  int lane = threadIdx.x % 32, wid = threadIdx.x / 32;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    int y = __shfl_up_sync(FULL, x, o);
    if (lane >= o) x += y;
  }
  if (lane == 31) warp_sums[wid] = x;
  __syncthreads();
  if (wid == 0) {
    int t = lane < WARPS ? warp_sums[lane] : 0;
#pragma unroll
    for (int o = 1; o < WARPS; o <<= 1) {
      int y = __shfl_up_sync(FULL, t, o);
      if (lane >= o) t += y;
    }
    if (lane < WARPS) warp_sums[lane] = t;
  }
  __syncthreads();
  if (wid > 0) x += warp_sums[wid - 1];
  *total = warp_sums[WARPS - 1];
  __syncthreads();  // warp_sums may be reused by the caller
  return x;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
bfs(int V, int depth, int frontier, const int *graph, int *level, int *qa, int *qb,
    int *count, unsigned *bits) {
  __shared__ int warp_sums[WARPS];
  __shared__ int ends[BLOCK];    // inclusive scan of the degrees
  __shared__ int shift[BLOCK];   // row start minus exclusive scan: edge e of the block is col[shift[j] + e]
  const int *row = graph, *col = graph + V + 1;
  int tid = threadIdx.x, i = blockIdx.x * BLOCK + tid;
  int beg = 0, deg = 0;
  if (i < frontier) {
    int v = qa[i];
    beg = row[v];
    deg = row[v + 1] - beg;
  }
  int total;
  int incl = block_scan(deg, warp_sums, &total);
  ends[tid] = incl;
  shift[tid] = beg - (incl - deg);
  __syncthreads();
  for (int base = 0; base < total; base += BLOCK) {
    int e = base + tid;
    if (e < total) {
      // The owner of edge e: the first j whose inclusive end exceeds e.
      int lo = 0, hi = BLOCK - 1;
      while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (ends[mid] > e) hi = mid; else lo = mid + 1;
      }
      int u = col[shift[lo] + e];
      if (atomicCAS(&level[u], -1, depth + 1) == -1) qb[atomicAdd(&count[0], 1)] = u;
    }
  }
}
