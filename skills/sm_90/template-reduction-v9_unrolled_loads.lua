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
      registers = 12.0,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 0.98333333333333, 1.0235313898638 },
      max = 1.0211179942605,
      median = 1.006392330463585,
      min = 0.99166666666667,
      n = 2,
    },
  },
  evidence = { 1, 2 },
  guards = {},
  id = "template-reduction-v9_unrolled_loads",
  intent = "the change of reduction v8_warp_shuffle.cu -> v9_unrolled_loads.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n#define UNROLL 4  // independent float4 loads in flight per thread\n/* ... */\n\n  // UNROLL independent loads are issued before any of them is used, each into\n  // its own accumulator, so more bytes are in flight per thread.\n  float acc[UNROLL];\n/* ... */\n\n#pragma unroll\n/* ... */\n\n  for (int u = 0; u < UNROLL; ++u) acc[u] = 0.0f;\n/* ... */\n\n  unsigned i = blockIdx.x * BLOCK + tid;\n/* ... */\n\n  for (; i + (UNROLL - 1) * stride < n4; i += UNROLL * stride) {\n    float4 q[UNROLL];\n#pragma unroll\n    for (int u = 0; u < UNROLL; ++u) q[u] = x4[i + u * stride];\n#pragma unroll\n    for (int u = 0; u < UNROLL; ++u) acc[u] += (q[u].x + q[u].y) + (q[u].z + q[u].w);\n  }\n/* ... */\n\n  for (; i < n4; i += stride) {\n    float4 q = x4[i];\n    acc[0] += (q.x + q.y) + (q.z + q.w);\n  }\n/* ... */\n\n#pragma unroll\n  for (int u = 0; u < UNROLL; ++u) v += acc[u];",
      before = "\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n  for (unsigned i = blockIdx.x * BLOCK + tid; i < n4; i += stride) {\n    float4 q = x4[i];\n    v += (q.x + q.y) + (q.z + q.w);\n  }",
    },
  },
  observations = {
    file = "template-reduction-v9_unrolled_loads.observations.jsonl",
    n = 2,
    sha256 = "82f7b7404b071ca71f0f5eaf10661d5542e47ebd92a345ae26b93c77caebafe8",
  },
  pattern = {
    source = "\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n  for (unsigned i = blockIdx.x * BLOCK + tid; i < n4; i += stride) {\n    float4 q = x4[i];\n    v += (q.x + q.y) + (q.z + q.w);\n  }",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
