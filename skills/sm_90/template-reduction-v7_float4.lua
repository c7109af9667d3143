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
      registers = 4.0,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 0.98333333333333, 1.1693812678165 },
      max = 1.1660786218031,
      median = 1.078872644234885,
      min = 0.99166666666667,
      n = 2,
    },
  },
  evidence = { 1, 2 },
  guards = {},
  id = "template-reduction-v7_float4",
  intent = "the change of reduction v6_grid_stride.cu -> v7_float4.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n  // 16-byte loads over the first 4 * (n / 4) elements (cuMemAlloc aligns x).\n  const float4 *x4 = reinterpret_cast<const float4 *>(x);\n/* ... */\n\n  unsigned n4 = (unsigned)n >> 2;\n/* ... */\n\n  unsigned stride = BLOCK * gridDim.x;\n/* ... */\n\n  for (unsigned i = blockIdx.x * BLOCK + tid; i < n4; i += stride) {\n    float4 q = x4[i];\n    v += (q.x + q.y) + (q.z + q.w);\n  }\n  // The n % 4 trailing elements go to the first threads of block 0.\n  if (blockIdx.x == 0 && tid < ((unsigned)n & 3u)) v += x[(n4 << 2) + tid];",
      before = "\n/* ... */\n\n/* ... */\n\n  // A fixed grid walks the whole array: each thread adds many elements.\n  unsigned stride = 2 * BLOCK * gridDim.x;\n/* ... */\n\n  for (unsigned i = blockIdx.x * (2 * BLOCK) + tid; i < (unsigned)n; i += stride) {\n    v += x[i];\n    if (i + BLOCK < (unsigned)n) v += x[i + BLOCK];\n  }",
    },
  },
  observations = {
    file = "template-reduction-v7_float4.observations.jsonl",
    n = 2,
    sha256 = "55adc9ed0b92f04ce34c17490805e7203235d725cdcf1afcefa1c55d6be42330",
  },
  pattern = {
    source = "\n/* ... */\n\n/* ... */\n\n  // A fixed grid walks the whole array: each thread adds many elements.\n  unsigned stride = 2 * BLOCK * gridDim.x;\n/* ... */\n\n  for (unsigned i = blockIdx.x * (2 * BLOCK) + tid; i < (unsigned)n; i += stride) {\n    v += x[i];\n    if (i + BLOCK < (unsigned)n) v += x[i + BLOCK];\n  }",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
