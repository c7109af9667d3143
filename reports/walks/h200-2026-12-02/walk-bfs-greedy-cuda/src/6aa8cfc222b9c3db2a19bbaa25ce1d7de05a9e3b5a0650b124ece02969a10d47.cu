// v6: direction-optimizing BFS: when the frontier holds more than V / ALPHA vertices the level runs bottom-up (every unvisited vertex scans its own neighbours for one on the frontier and stops at the first), otherwise top-down as before; large middle levels of a low-diameter graph then skip most of their edges.
// Level-synchronous BFS from vertex 0 on a CSR graph (graph = V + 1 row
// offsets, then the column indices). level[v] = distance, -1 unreached.
// qa holds the frontier (frontier entries), qb receives the next one and
// count[0] its size; bits is the visited bitmask.
// @kl launch grid(cdiv(min(frontier * ALPHA, V), BLOCK)) block(BLOCK)
// @kl launch(bfs_init) grid(cdiv(V, BLOCK)) block(BLOCK)
#define BLOCK 64
#define ALPHA 16  // bottom-up when frontier * ALPHA > V; the grid then has a thread per vertex
#define WARPS (BLOCK / 32)
#define FULL 0xffffffffu

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
  __shared__ int owner, owner_beg, owner_deg;
  const int *row = graph, *col = graph + V + 1;
  int tid = threadIdx.x, lane = tid % 32;
  if (frontier * ALPHA > V) {
    // Bottom-up. Warp-aligned grid-stride loop: every lane of a warp makes
    // the same trips, so the ballot below sees the whole warp.
    for (int base = blockIdx.x * BLOCK + tid - lane; base < V; base += gridDim.x * BLOCK) {
      int v = base + lane;
      bool found = false;
      if (v < V && level[v] == -1) {
        for (int e = row[v]; e < row[v + 1]; ++e)
          if (level[col[e]] == depth) {  // a vertex labelled in this launch has depth + 1
            found = true;
            break;
          }
        if (found) {
          level[v] = depth + 1;
          atomicOr(&bits[v / 32], 1u << (v % 32));
        }
      }
      // One atomicAdd per warp reserves the slots of all its finds.
      unsigned finds = __ballot_sync(FULL, found);
      if (finds) {
        int slot = 0;
        if (lane == 0) slot = atomicAdd(&count[0], __popc(finds));
        slot = __shfl_sync(FULL, slot, 0);
        if (found) qb[slot + __popc(finds & ((1u << lane) - 1u))] = v;
      }
    }
    return;
  }
  // Top-down: the grid may hold more blocks than the frontier needs (its
  // size is set for bottom-up levels); each block takes BLOCK frontier
  // vertices at a time, the same for all its threads.
  for (int first = blockIdx.x * BLOCK; first < frontier; first += gridDim.x * BLOCK) {
    int i = first + tid;
    int beg = 0, deg = 0;
    if (i < frontier) {
      int v = qa[i];
      beg = row[v];
      deg = row[v + 1] - beg;
    }
    // Block tier: one vertex of degree >= BLOCK at a time, all threads on it.
    while (__syncthreads_or(deg >= BLOCK)) {
      if (deg >= BLOCK) owner = tid;  // any one of the contenders wins
      __syncthreads();
      if (owner == tid) {
        owner_beg = beg;
        owner_deg = deg;
        deg = 0;
      }
      __syncthreads();
      int b = owner_beg, end = owner_beg + owner_deg;
      for (int e = b + tid; e < end; e += BLOCK) {
        int u = col[e];
        visit(u, depth, bits, level, qb, count);
      }
      __syncthreads();  // owner_* are rewritten by the next round
    }
    // Warp tier: one vertex of degree >= 32 at a time per warp.
    unsigned want;
    while ((want = __ballot_sync(FULL, deg >= 32)) != 0) {
      int leader = __ffs(want) - 1;
      int b = __shfl_sync(FULL, beg, leader), d = __shfl_sync(FULL, deg, leader);
      if (lane == leader) deg = 0;
      for (int e = b + lane; e < b + d; e += 32) {
        int u = col[e];
        visit(u, depth, bits, level, qb, count);
      }
    }
    // Scan tier: the remaining short lists, laid end to end.
    int total;
    int incl = block_scan(deg, warp_sums, &total);
    ends[tid] = incl;
    shift[tid] = beg - (incl - deg);
    __syncthreads();
    for (int base = 0; base < total; base += BLOCK) {
      int e = base + tid;
      if (e < total) {
        int lo = 0, hi = BLOCK - 1;
        while (lo < hi) {
          int mid = (lo + hi) / 2;
          if (ends[mid] > e) hi = mid; else lo = mid + 1;
        }
        int u = col[shift[lo] + e];
        visit(u, depth, bits, level, qb, count);
      }
    }
    __syncthreads();  // ends and shift are rewritten by the next chunk
  }
}
