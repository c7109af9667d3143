-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 0,
    level = "seen once",
    lineages = 1,
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
      ci = { 1.0158095090769, 1.0204544599997 },
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
    sha256 = "b999ef2c7037056f4f2de4ab7ad60648ee5b095389ce72758d0fe60f12fe7c86",
  },
  pattern = {
    source = "\n  for (unsigned i = blockIdx.x * BLOCK + tid; i < n4; i += stride) {\n    float4 q = x4[i];\n    v += (q.x + q.y) + (q.z + q.w);\n  }",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
