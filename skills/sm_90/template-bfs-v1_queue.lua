-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 2,
    level = "low",
    lineages = 1,
    supporting = 0,
    why = "helped 0 of 2 labelled observations from 1 lineage; it never helped, so no precondition could be learned",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = 7.0,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 0.58920343680242, 0.71067436030516 },
      max = 0.71040632562614,
      median = 0.6526250513477101,
      min = 0.59484377706928,
      n = 2,
    },
  },
  evidence = { 1, 2 },
  guards = {},
  id = "template-bfs-v1_queue",
  intent = "the change of bfs v0_naive.cu -> v1_queue.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n  if (v == 0) qa[0] = 0;\n/* ... */\n\n  int i = blockIdx.x * BLOCK + threadIdx.x;\n/* ... */\n\n  if (i >= frontier) return;\n/* ... */\n\n  int v = qa[i];\n/* ... */\n\n    if (atomicCAS(&level[u], -1, depth + 1) == -1) qb[atomicAdd(&count[0], 1)] = u;\n/* ... */\n",
      before = "\n/* ... */\n\n  int v = blockIdx.x * BLOCK + threadIdx.x;\n/* ... */\n\n  if (v >= V || level[v] != depth) return;\n/* ... */\n\n  bool labelled = false;\n/* ... */\n\n    // Two threads may both see -1 and both write depth + 1: the same value.\n    if (level[u] == -1) {\n      level[u] = depth + 1;\n      labelled = true;\n    }\n/* ... */\n\n  if (labelled) count[0] = 1;",
    },
  },
  observations = {
    file = "template-bfs-v1_queue.observations.jsonl",
    n = 2,
    sha256 = "e11d9ffab37d80ed1bd1091344d1cbe2a744eadf442d6168fbd6a3f1dc425469",
  },
  pattern = {
    source = "\n/* ... */\n\n  int v = blockIdx.x * BLOCK + threadIdx.x;\n/* ... */\n\n  if (v >= V || level[v] != depth) return;\n/* ... */\n\n  bool labelled = false;\n/* ... */\n\n    // Two threads may both see -1 and both write depth + 1: the same value.\n    if (level[u] == -1) {\n      level[u] = depth + 1;\n      labelled = true;\n    }\n/* ... */\n\n  if (labelled) count[0] = 1;",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
  unexplained = {
    {
      evidence = { 1 },
      why = "slowed bfs v0_naive.cu -> v1_queue.cu (at bench 2 (E=4190208, V=1048576, kind=1)) by 0.71x: no helped case to contrast it with",
    },
    {
      evidence = { 2 },
      why = "slowed bfs v0_naive.cu -> v1_queue.cu by 0.59x: no helped case to contrast it with",
    },
  },
}
