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
      registers = 14.0,
      smem_per_block = 12.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 0.99373455500158, 1.3256187740821 },
      max = 1.3148817801,
      median = 1.15452584370604,
      min = 0.99416990731208,
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
      why = "slowed bfs v3_scan_gather.cu -> v4_hybrid.cu (at bench 2 (E=4190208, V=1048576, kind=1)) by 0.99x at arithmetic intensity (flops/byte) = 0.5: arithmetic intensity (flops/byte) < 2.25 (arithmetic intensity (flops/byte) < 2.25 after the change, outputs per thread the device holds < 9.697, outputs per thread the device holds < 9.697 after the change alike), while it paid where arithmetic intensity (flops/byte) ≥ 4 (1.31x); it only ranks: seen in 1 lineage, with no wrong result",
    },
  },
  id = "template-bfs-v4_hybrid",
  intent = "the change of bfs v3_scan_gather.cu -> v4_hybrid.cu, as the walk saw it",
  materialize = {
    template = {
      after = "   // row start minus exclusive scan: edge e of the block is col[shift[j] + e]\n  __shared__ int owner, owner_beg, owner_deg;\n/* ... */\n\n  int tid = threadIdx.x, lane = tid % 32, i = blockIdx.x * BLOCK + tid;\n/* ... */\n\n  // Block tier: one vertex of degree >= BLOCK at a time, all threads on it.\n  while (__syncthreads_or(deg >= BLOCK)) {\n    if (deg >= BLOCK) owner = tid;  // any one of the contenders wins\n    __syncthreads();\n    if (owner == tid) {\n      owner_beg = beg;\n      owner_deg = deg;\n      deg = 0;\n    }\n    __syncthreads();\n    int b = owner_beg, end = owner_beg + owner_deg;\n    for (int e = b + tid; e < end; e += BLOCK) {\n      int u = col[e];\n      if (atomicCAS(&level[u], -1, depth + 1) == -1) qb[atomicAdd(&count[0], 1)] = u;\n    }\n    __syncthreads();  // owner_* are rewritten by the next round\n  }\n/* ... */\n\n  // Warp tier: one vertex of degree >= 32 at a time per warp.\n  unsigned want;\n/* ... */\n\n  while ((want = __ballot_sync(FULL, deg >= 32)) != 0) {\n    int leader = __ffs(want) - 1;\n    int b = __shfl_sync(FULL, beg, leader), d = __shfl_sync(FULL, deg, leader);\n    if (lane == leader) deg = 0;\n    for (int e = b + lane; e < b + d; e += 32) {\n      int u = col[e];\n      if (atomicCAS(&level[u], -1, depth + 1) == -1) qb[atomicAdd(&count[0], 1)] = u;\n    }\n  }",
      before = "\n/* ... */\n\n  int tid = threadIdx.x, i = blockIdx.x * BLOCK + tid;\n/* ... */\n\n/* ... */\n\n/* ... */\n",
    },
  },
  observations = {
    file = "template-bfs-v4_hybrid.observations.jsonl",
    n = 2,
    sha256 = "1b9d9f3839a990c526ec0d941c3acdf83fbc4fbd541298c2fbcb5766a8ff2f6d",
  },
  pattern = {
    source = "\n/* ... */\n\n  int tid = threadIdx.x, i = blockIdx.x * BLOCK + tid;\n/* ... */\n\n/* ... */\n\n/* ... */\n",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
