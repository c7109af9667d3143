-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 1,
    level = "low",
    supporting = 1,
    why = "helped 1 of 2 labelled observations; one success cannot say what made it pay, so no precondition was learned",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = -8.0,
      smem_per_block = 2.08e+03,
      spill_stores = 0.0,
    },
    speedup = {
      max = 1.647388063029,
      median = 0.9752544901083601,
      min = 0.30312091718772,
      n = 2,
    },
  },
  evidence = { 1, 2 },
  guards = {
    { "role.intensity", "<", 2.249755859375,
      evidence = { 1, 2 },
      source = "probe",
      support = {
        helped = 1,
        not_helped = 1,
      },
      why = "slowed bfs v2_warp_gather.cu -> v3_scan_gather.cu (at bench 2 (E=4190208, V=1048576, kind=1)) by 0.30x at arithmetic intensity (flops/byte) = 0.5: arithmetic intensity (flops/byte) < 2.25 (arithmetic intensity (flops/byte) < 2.25 after the change, outputs per thread the device holds < 9.697, outputs per thread the device holds < 9.697 after the change alike), while it paid where arithmetic intensity (flops/byte) ≥ 4 (1.65x)",
    },
  },
  id = "template-bfs-v3_scan_gather",
  intent = "the change of bfs v2_warp_gather.cu -> v3_scan_gather.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n#define WARPS (BLOCK / 32)\n/* ... */\n\n#define FULL 0xffffffffu\n/* ... */\n\n\n// Inclusive prefix sum of x over the block (shuffles inside each warp, one\n// shared slot per warp); *total gets the block's sum. Every thread calls it.\n__device__ __forceinline__ int block_scan(int x, int *warp_sums, int *total) {\n  int lane = threadIdx.x % 32, wid = threadIdx.x / 32;\n#pragma unroll\n  for (int o = 1; o < 32; o <<= 1) {\n    int y = __shfl_up_sync(FULL, x, o);\n    if (lane >= o) x += y;\n  }\n  if (lane == 31) warp_sums[wid] = x;\n  __syncthreads();\n  if (wid == 0) {\n    int t = lane < WARPS ? warp_sums[lane] : 0;\n#pragma unroll\n    for (int o = 1; o < WARPS; o <<= 1) {\n      int y = __shfl_up_sync(FULL, t, o);\n      if (lane >= o) t += y;\n    }\n    if (lane < WARPS) warp_sums[lane] = t;\n  }\n  __syncthreads();\n  if (wid > 0) x += warp_sums[wid - 1];\n  *total = warp_sums[WARPS - 1];\n  __syncthreads();  // warp_sums may be reused by the caller\n  return x;\n}\n/* ... */\n\n\nextern \"C\" __global__ void __launch_bounds__(BLOCK)\nbfs(int V, int depth, int frontier, const int *graph, int *level, int *qa, int *qb,\n    int *count, unsigned *bits) {\n  __shared__ int warp_sums[WARPS];\n  __shared__ int ends[BLOCK];    // inclusive scan of the degrees\n  __shared__ int shift[BLOCK];   // row start minus exclusive scan: edge e of the block is col[shift[j] + e]\n  const int *row = graph, *col = graph + V + 1;\n  int tid = threadIdx.x, i = blockIdx.x * BLOCK + tid;\n  int beg = 0, deg = 0;\n  if (i < frontier) {\n    int v = qa[i];\n    beg = row[v];\n    deg = row[v + 1] - beg;\n  }\n  int total;\n  int incl = block_scan(deg, warp_sums, &total);\n  ends[tid] = incl;\n  shift[tid] = beg - (incl - deg);\n  __syncthreads();\n  for (int base = 0; base < total; base += BLOCK) {\n    int e = base + tid;\n    if (e < total) {\n      // The owner of edge e: the first j whose inclusive end exceeds e.\n      int lo = 0, hi = BLOCK - 1;\n      while (lo < hi) {\n        int mid = (lo + hi) / 2;\n        if (ends[mid] > e) hi = mid; else lo = mid + 1;\n      }\n      int u = col[shift[lo] + e];\n      if (atomicCAS(&level[u], -1, depth + 1) == -1) qb[atomicAdd(&count[0], 1)] = u;\n    }\n  }\n}",
      before = "\n#define WARPS 8  // warps per block: one frontier vertex each\n/* ... */\n\n\nstatic_assert(WARPS * 32 == BLOCK, \"one warp per frontier vertex\");\n/* ... */\n\n/* ... */\n\n\nextern \"C\" __global__ void bfs(int V, int depth, int frontier, const int *graph,\n                               int *level, int *qa, int *qb, int *count, unsigned *bits) {\n  int warp = (blockIdx.x * BLOCK + threadIdx.x) / 32, lane = threadIdx.x % 32;\n  if (warp >= frontier) return;\n  const int *row = graph, *col = graph + V + 1;\n  int v = qa[warp];\n  int end = row[v + 1];\n  for (int e = row[v] + lane; e < end; e += 32) {\n    int u = col[e];\n    if (atomicCAS(&level[u], -1, depth + 1) == -1) qb[atomicAdd(&count[0], 1)] = u;\n  }\n}",
    },
  },
  observations = {
    file = "template-bfs-v3_scan_gather.observations.jsonl",
    n = 2,
    sha256 = "235fe5ba10a34b68d8df1127ccf273930a29d898512ea58a517858ee964ae29e",
  },
  pattern = {
    source = "\n#define WARPS 8  // warps per block: one frontier vertex each\n/* ... */\n\n\nstatic_assert(WARPS * 32 == BLOCK, \"one warp per frontier vertex\");\n/* ... */\n\n/* ... */\n\n\nextern \"C\" __global__ void bfs(int V, int depth, int frontier, const int *graph,\n                               int *level, int *qa, int *qb, int *count, unsigned *bits) {\n  int warp = (blockIdx.x * BLOCK + threadIdx.x) / 32, lane = threadIdx.x % 32;\n  if (warp >= frontier) return;\n  const int *row = graph, *col = graph + V + 1;\n  int v = qa[warp];\n  int end = row[v + 1];\n  for (int e = row[v] + lane; e < end; e += 32) {\n    int u = col[e];\n    if (atomicCAS(&level[u], -1, depth + 1) == -1) qb[atomicAdd(&count[0], 1)] = u;\n  }\n}",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
