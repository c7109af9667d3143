-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 0,
    level = "low",
    lineages = 1,
    supporting = 2,
    why = "helped 2 of 2 labelled observations from 1 lineage; it never failed to help, so no precondition could be learned",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = -1.0,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 1.1332679427925, 1.7801179964409 },
      max = 1.7770634288542,
      median = 1.45570535252905,
      min = 1.1343472762039,
      n = 2,
    },
  },
  evidence = { 1, 2 },
  guards = {},
  id = "template-raytrace-v3_float4",
  intent = "the change of raytrace v2_while_while.cu -> v3_float4.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n  const float4 *t4 = reinterpret_cast<const float4 *>(tris);\n/* ... */\n\n    float4 a = t4[3L * t], b = t4[3L * t + 1], c = t4[3L * t + 2];\n    intersect(o, d, make_float3(a.x, a.y, a.z), make_float3(b.x, b.y, b.z), make_float3(c.x, c.y, c.z),\n              t, tbest, ibest);\n/* ... */\n\n  const float4 *n4 = reinterpret_cast<const float4 *>(nodes) + 4L * n;\n  float4 a = n4[0], b = n4[1], c = n4[2], k = n4[3];\n/* ... */\n\n  t0 = box_hit(o, inv, a.x, a.y, a.z, a.w, c.x, c.y, tmax);\n/* ... */\n\n  t1 = box_hit(o, inv, b.x, b.y, b.z, b.w, c.z, c.w, tmax);\n/* ... */\n\n  e0 = entry(__float_as_int(k.x), __float_as_int(k.z));\n/* ... */\n\n  e1 = entry(__float_as_int(k.y), __float_as_int(k.w));",
      before = "\n/* ... */\n\n    const float *tri = tris + 12L * t;\n    intersect(o, d, make_float3(tri[0], tri[1], tri[2]), make_float3(tri[4], tri[5], tri[6]),\n              make_float3(tri[8], tri[9], tri[10]), t, tbest, ibest);\n/* ... */\n\n  const float *nd = nodes + 16L * n;\n/* ... */\n\n  t0 = box_hit(o, inv, nd[0], nd[1], nd[2], nd[3], nd[8], nd[9], tmax);\n/* ... */\n\n  t1 = box_hit(o, inv, nd[4], nd[5], nd[6], nd[7], nd[10], nd[11], tmax);\n/* ... */\n\n  e0 = entry(__float_as_int(nd[12]), __float_as_int(nd[14]));\n/* ... */\n\n  e1 = entry(__float_as_int(nd[13]), __float_as_int(nd[15]));",
    },
  },
  observations = {
    file = "template-raytrace-v3_float4.observations.jsonl",
    n = 2,
    sha256 = "7b015740639ba05278b59941c9cb444c69e8ebc890d71d02db19e069d71312be",
  },
  pattern = {
    source = "\n/* ... */\n\n    const float *tri = tris + 12L * t;\n    intersect(o, d, make_float3(tri[0], tri[1], tri[2]), make_float3(tri[4], tri[5], tri[6]),\n              make_float3(tri[8], tri[9], tri[10]), t, tbest, ibest);\n/* ... */\n\n  const float *nd = nodes + 16L * n;\n/* ... */\n\n  t0 = box_hit(o, inv, nd[0], nd[1], nd[2], nd[3], nd[8], nd[9], tmax);\n/* ... */\n\n  t1 = box_hit(o, inv, nd[4], nd[5], nd[6], nd[7], nd[10], nd[11], tmax);\n/* ... */\n\n  e0 = entry(__float_as_int(nd[12]), __float_as_int(nd[14]));\n/* ... */\n\n  e1 = entry(__float_as_int(nd[13]), __float_as_int(nd[15]));",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
