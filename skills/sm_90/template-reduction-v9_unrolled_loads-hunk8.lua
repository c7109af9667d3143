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
      registers = 13,
      smem_per_block = 0,
      spill_stores = 0,
    },
    speedup = {
      max = 1.0206067652083,
      median = 1.0206067652083,
      min = 1.0206067652083,
      n = 1,
    },
  },
  evidence = { 1 },
  guards = {},
  id = "template-reduction-v9_unrolled_loads-hunk8",
  intent = "the change of reduction v8_warp_shuffle.cu, hunk 8 at line 34 reverted -> v9_unrolled_loads.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n  for (; i + (UNROLL - 1) * stride < n4; i += UNROLL * stride) {\n    float4 q[UNROLL];\n#pragma unroll\n    for (int u = 0; u < UNROLL; ++u) q[u] = x4[i + u * stride];\n#pragma unroll\n    for (int u = 0; u < UNROLL; ++u) acc[u] += (q[u].x + q[u].y) + (q[u].z + q[u].w);\n  }",
      before = "",
    },
  },
  observations = {
    file = "template-reduction-v9_unrolled_loads-hunk8.observations.jsonl",
    n = 1,
    sha256 = "c560b0e0c8b384a28c80c1520942b8faaaaf6e2e1888fb5cf6eb6d49f06d33ae",
  },
  pattern = {
    source = "\n  for (; i + (UNROLL - 1) * stride < n4; i += UNROLL * stride) {\n    float4 q[UNROLL];\n#pragma unroll\n    for (int u = 0; u < UNROLL; ++u) q[u] = x4[i + u * stride];\n#pragma unroll\n    for (int u = 0; u < UNROLL; ++u) acc[u] += (q[u].x + q[u].y) + (q[u].z + q[u].w);\n  }",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
