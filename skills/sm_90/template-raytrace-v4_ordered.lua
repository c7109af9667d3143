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
      registers = 0.0,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 1.1643774145381, 1.1765005052656 },
      max = 1.1750100392439,
      median = 1.17063096501405,
      min = 1.1662518907842,
      n = 2,
    },
  },
  evidence = { 1, 2 },
  guards = {},
  id = "template-raytrace-v4_ordered",
  intent = "the change of raytrace v3_float4.cu -> v4_ordered.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n        if (t1 < t0) {  // nearer child first: its hits shrink tbest before the far one is tested\n          int te = e0;\n          e0 = e1;\n          e1 = te;\n        }",
      before = "",
    },
  },
  observations = {
    file = "template-raytrace-v4_ordered.observations.jsonl",
    n = 2,
    sha256 = "e9cb363c8990ff3a8170d40664db9a348c912f276f8f2b862dcb7b2c29fe30d5",
  },
  pattern = {
    source = "\n        if (t1 < t0) {  // nearer child first: its hits shrink tbest before the far one is tested\n          int te = e0;\n          e0 = e1;\n          e1 = te;\n        }",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
