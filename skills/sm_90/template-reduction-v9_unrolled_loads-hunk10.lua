-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 0,
    level = "seen once",
    supporting = 1,
    why = "one observation: nothing to generalize from; it never failed to help, so no precondition could be learned",
  },
  effect = {
    resources = {
      occupancy = 0,
      registers = 12,
      smem_per_block = 0,
      spill_stores = 0,
    },
    speedup = {
      max = 1.0176234612328,
      median = 1.0176234612328,
      min = 1.0176234612328,
      n = 1,
    },
  },
  evidence = { 1 },
  guards = {},
  id = "template-reduction-v9_unrolled_loads-hunk10",
  intent = "the change of reduction v8_warp_shuffle.cu, hunk 10 at line 46 reverted -> v9_unrolled_loads.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n#pragma unroll\n  for (int u = 0; u < UNROLL; ++u) v += acc[u];",
      before = "\n  for (unsigned i = blockIdx.x * BLOCK + tid; i < n4; i += stride) {\n    float4 q = x4[i];\n    v += (q.x + q.y) + (q.z + q.w);\n  }",
    },
  },
  observations = {
    file = "template-reduction-v9_unrolled_loads-hunk10.observations.jsonl",
    n = 1,
    sha256 = "5508746e7b4caf11963390d6404f31cd3b22e0b93d8385a6cdc5321cfc504142",
  },
  pattern = {
    source = "\n  for (unsigned i = blockIdx.x * BLOCK + tid; i < n4; i += stride) {\n    float4 q = x4[i];\n    v += (q.x + q.y) + (q.z + q.w);\n  }",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
