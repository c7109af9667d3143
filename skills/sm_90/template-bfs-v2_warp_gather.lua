-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 0,
    level = "low",
    supporting = 2,
    why = "helped 2 of 2 labelled observations; it never failed to help, so no precondition could be learned",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = 0.0,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      max = 12.564446296867,
      median = 7.67500773461085,
      min = 2.7855691723547,
      n = 2,
    },
  },
  evidence = { 1, 2 },
  guards = {},
  id = "template-bfs-v2_warp_gather",
  intent = "the change of bfs v1_queue.cu -> v2_warp_gather.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n#define WARPS 8  // warps per block: one frontier vertex each\n/* ... */\n\n\nstatic_assert(WARPS * 32 == BLOCK, \"one warp per frontier vertex\");\n/* ... */\n\n  int warp = (blockIdx.x * BLOCK + threadIdx.x) / 32, lane = threadIdx.x % 32;\n/* ... */\nwarp\n/* ... */\n\n  int v = qa[warp];\n/* ... */\n\n  int end = row[v + 1];\n/* ... */\n\n  for (int e = row[v] + lane; e < end; e += 32) {\n    int u = col[e];\n    if (atomicCAS(&level[u], -1, depth + 1) == -1) qb[atomicAdd(&count[0], 1)] = u;\n  }",
      before = "\n/* ... */\n\n/* ... */\n\n  int i = blockIdx.x * BLOCK + threadIdx.x;\n/* ... */\ni\n/* ... */\n\n  int v = qa[i];\n/* ... */\n\n/* ... */\n\n  for (int e = row[v]; e < row[v + 1]; ++e) {\n    int u = col[e];\n    if (atomicCAS(&level[u], -1, depth + 1) == -1) qb[atomicAdd(&count[0], 1)] = u;\n  }",
    },
  },
  observations = {
    file = "template-bfs-v2_warp_gather.observations.jsonl",
    n = 2,
    sha256 = "748603d68cc9a80650df1ad9e1a4e5e1dbedf440227bf419338da9b2bdb4c9c4",
  },
  pattern = {
    source = "\n/* ... */\n\n/* ... */\n\n  int i = blockIdx.x * BLOCK + threadIdx.x;\n/* ... */\ni\n/* ... */\n\n  int v = qa[i];\n/* ... */\n\n/* ... */\n\n  for (int e = row[v]; e < row[v + 1]; ++e) {\n    int u = col[e];\n    if (atomicCAS(&level[u], -1, depth + 1) == -1) qb[atomicAdd(&count[0], 1)] = u;\n  }",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
