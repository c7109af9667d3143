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
      registers = 13,
      smem_per_block = 0,
      spill_stores = 0,
    },
    speedup = {
      ci = { 1.0171477621065, 1.0223617488374 },
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
    sha256 = "180505a63e0cb51021c0367cf07de114d09b1201758abec155e5d008e136f367",
  },
  pattern = {
    source = "\n  for (; i + (UNROLL - 1) * stride < n4; i += UNROLL * stride) {\n    float4 q[UNROLL];\n#pragma unroll\n    for (int u = 0; u < UNROLL; ++u) q[u] = x4[i + u * stride];\n#pragma unroll\n    for (int u = 0; u < UNROLL; ++u) acc[u] += (q[u].x + q[u].y) + (q[u].z + q[u].w);\n  }",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
