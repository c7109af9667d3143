-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 1,
    level = "low",
    lineages = 1,
    supporting = 1,
    why = "helped 1 of 2 labelled observations from 1 lineage; one success cannot say what made it pay, so no precondition was learned",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = 0.0,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 0.98924390813283, 1.0602878296732 },
      max = 1.056730316696,
      median = 1.02320761358744,
      min = 0.98968491047888,
      n = 2,
    },
  },
  evidence = { 1, 2 },
  guards = {
    { "role.intensity", "<", 2.249755859375,
      blocks = false,
      evidence = { 1, 2 },
      source = "probe",
      support = {
        helped = 1,
        not_helped = 1,
      },
      why = "slowed bfs v5_bitmask.cu -> v6_direction_opt.cu (at bench 2 (E=4190208, V=1048576, kind=1)) by 0.99x at arithmetic intensity (flops/byte) = 0.5: arithmetic intensity (flops/byte) < 2.25 (arithmetic intensity (flops/byte) < 2.25 after the change, outputs per thread the device holds < 9.697, outputs per thread the device holds < 9.697 after the change alike), while it paid where arithmetic intensity (flops/byte) ≥ 4 (1.06x); it only ranks: seen in 1 lineage, with no wrong result",
    },
  },
  id = "template-bfs-v6_direction_opt",
  intent = "the change of bfs v5_bitmask.cu -> v6_direction_opt.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n#define ALPHA 16  // bottom-up when frontier * ALPHA > V; the grid then has a thread per vertex\n/* ... */\n\n  int tid = threadIdx.x, lane = tid % 32;\n  if (frontier * ALPHA > V) {\n    // Bottom-up. Warp-aligned grid-stride loop: every lane of a warp makes\n    // the same trips, so the ballot below sees the whole warp.\n    for (int base = blockIdx.x * BLOCK + tid - lane; base < V; base += gridDim.x * BLOCK) {\n      int v = base + lane;\n      bool found = false;\n      if (v < V && level[v] == -1) {\n        for (int e = row[v]; e < row[v + 1]; ++e)\n          if (level[col[e]] == depth) {  // a vertex labelled in this launch has depth + 1\n            found = true;\n            break;\n          }\n        if (found) {\n          level[v] = depth + 1;\n          atomicOr(&bits[v / 32], 1u << (v % 32));\n        }\n      }\n      // One atomicAdd per warp reserves the slots of all its finds.\n      unsigned finds = __ballot_sync(FULL, found);\n      if (finds) {\n        int slot = 0;\n        if (lane == 0) slot = atomicAdd(&count[0], __popc(finds));\n        slot = __shfl_sync(FULL, slot, 0);\n        if (found) qb[slot + __popc(finds & ((1u << lane) - 1u))] = v;\n      }\n    }\n    return;\n  }\n  // Top-down: the grid may hold more blocks than the frontier needs (its\n  // size is set for bottom-up levels); each block takes BLOCK frontier\n  // vertices at a time, the same for all its threads.\n  for (int first = blockIdx.x * BLOCK; first < frontier; first += gridDim.x * BLOCK) {\n    int i = first + tid;\n    int beg = 0, deg = 0;\n    if (i < frontier) {\n      int v = qa[i];\n      beg = row[v];\n      deg = row[v + 1] - beg;\n    }\n    // Block tier: one vertex of degree >= BLOCK at a time, all threads on it.\n    while (__syncthreads_or(deg >= BLOCK)) {\n      if (deg >= BLOCK) owner = tid;  // any one of the contenders wins\n      __syncthreads();\n      if (owner == tid) {\n        owner_beg = beg;\n        owner_deg = deg;\n        deg = 0;\n      }\n      __syncthreads();\n      int b = owner_beg, end = owner_beg + owner_deg;\n      for (int e = b + tid; e < end; e += BLOCK) {\n        int u = col[e];\n        visit(u, depth, bits, level, qb, count);\n      }\n      __syncthreads();  // owner_* are rewritten by the next round\n    }\n    // Warp tier: one vertex of degree >= 32 at a time per warp.\n    unsigned want;\n    while ((want = __ballot_sync(FULL, deg >= 32)) != 0) {\n      int leader = __ffs(want) - 1;\n      int b = __shfl_sync(FULL, beg, leader), d = __shfl_sync(FULL, deg, leader);\n      if (lane == leader) deg = 0;\n      for (int e = b + lane; e < b + d; e += 32) {\n        int u = col[e];\n        visit(u, depth, bits, level, qb, count);\n      }\n    }\n    // Scan tier: the remaining short lists, laid end to end.\n    int total;\n    int incl = block_scan(deg, warp_sums, &total);\n    ends[tid] = incl;\n    shift[tid] = beg - (incl - deg);\n    __syncthreads();\n    for (int base = 0; base < total; base += BLOCK) {\n      int e = base + tid;\n      if (e < total) {\n        int lo = 0, hi = BLOCK - 1;\n        while (lo < hi) {\n          int mid = (lo + hi) / 2;\n          if (ends[mid] > e) hi = mid; else lo = mid + 1;\n        }\n        int u = col[shift[lo] + e];\n        visit(u, depth, bits, level, qb, count);\n      }\n    }\n    __syncthreads();  // ends and shift are rewritten by the next chunk\n  }",
      before = "\n/* ... */\n\n  int tid = threadIdx.x, lane = tid % 32, i = blockIdx.x * BLOCK + tid;\n  int beg = 0, deg = 0;\n  if (i < frontier) {\n    int v = qa[i];\n    beg = row[v];\n    deg = row[v + 1] - beg;\n  }\n  // Block tier: one vertex of degree >= BLOCK at a time, all threads on it.\n  while (__syncthreads_or(deg >= BLOCK)) {\n    if (deg >= BLOCK) owner = tid;  // any one of the contenders wins\n    __syncthreads();\n    if (owner == tid) {\n      owner_beg = beg;\n      owner_deg = deg;\n      deg = 0;\n    }\n    __syncthreads();\n    int b = owner_beg, end = owner_beg + owner_deg;\n    for (int e = b + tid; e < end; e += BLOCK) {\n      int u = col[e];\n      visit(u, depth, bits, level, qb, count);\n    }\n    __syncthreads();  // owner_* are rewritten by the next round\n  }\n  // Warp tier: one vertex of degree >= 32 at a time per warp.\n  unsigned want;\n  while ((want = __ballot_sync(FULL, deg >= 32)) != 0) {\n    int leader = __ffs(want) - 1;\n    int b = __shfl_sync(FULL, beg, leader), d = __shfl_sync(FULL, deg, leader);\n    if (lane == leader) deg = 0;\n    for (int e = b + lane; e < b + d; e += 32) {\n      int u = col[e];\n      visit(u, depth, bits, level, qb, count);\n    }\n  }\n  // Scan tier: the remaining short lists, laid end to end.\n  int total;\n  int incl = block_scan(deg, warp_sums, &total);\n  ends[tid] = incl;\n  shift[tid] = beg - (incl - deg);\n  __syncthreads();\n  for (int base = 0; base < total; base += BLOCK) {\n    int e = base + tid;\n    if (e < total) {\n      int lo = 0, hi = BLOCK - 1;\n      while (lo < hi) {\n        int mid = (lo + hi) / 2;\n        if (ends[mid] > e) hi = mid; else lo = mid + 1;\n      }\n      int u = col[shift[lo] + e];\n      visit(u, depth, bits, level, qb, count);\n    }\n  }",
    },
  },
  observations = {
    file = "template-bfs-v6_direction_opt.observations.jsonl",
    n = 2,
    sha256 = "2f90f966d8c78278f05af9480d08737ae0f337a1125f338fd65f9ad1a9fba06e",
  },
  pattern = {
    source = "\n/* ... */\n\n  int tid = threadIdx.x, lane = tid % 32, i = blockIdx.x * BLOCK + tid;\n  int beg = 0, deg = 0;\n  if (i < frontier) {\n    int v = qa[i];\n    beg = row[v];\n    deg = row[v + 1] - beg;\n  }\n  // Block tier: one vertex of degree >= BLOCK at a time, all threads on it.\n  while (__syncthreads_or(deg >= BLOCK)) {\n    if (deg >= BLOCK) owner = tid;  // any one of the contenders wins\n    __syncthreads();\n    if (owner == tid) {\n      owner_beg = beg;\n      owner_deg = deg;\n      deg = 0;\n    }\n    __syncthreads();\n    int b = owner_beg, end = owner_beg + owner_deg;\n    for (int e = b + tid; e < end; e += BLOCK) {\n      int u = col[e];\n      visit(u, depth, bits, level, qb, count);\n    }\n    __syncthreads();  // owner_* are rewritten by the next round\n  }\n  // Warp tier: one vertex of degree >= 32 at a time per warp.\n  unsigned want;\n  while ((want = __ballot_sync(FULL, deg >= 32)) != 0) {\n    int leader = __ffs(want) - 1;\n    int b = __shfl_sync(FULL, beg, leader), d = __shfl_sync(FULL, deg, leader);\n    if (lane == leader) deg = 0;\n    for (int e = b + lane; e < b + d; e += 32) {\n      int u = col[e];\n      visit(u, depth, bits, level, qb, count);\n    }\n  }\n  // Scan tier: the remaining short lists, laid end to end.\n  int total;\n  int incl = block_scan(deg, warp_sums, &total);\n  ends[tid] = incl;\n  shift[tid] = beg - (incl - deg);\n  __syncthreads();\n  for (int base = 0; base < total; base += BLOCK) {\n    int e = base + tid;\n    if (e < total) {\n      int lo = 0, hi = BLOCK - 1;\n      while (lo < hi) {\n        int mid = (lo + hi) / 2;\n        if (ends[mid] > e) hi = mid; else lo = mid + 1;\n      }\n      int u = col[shift[lo] + e];\n      visit(u, depth, bits, level, qb, count);\n    }\n  }",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
