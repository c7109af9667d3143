-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 3,
    level = "low",
    lineages = 1,
    supporting = 3,
    why = "helped 3 of 6 labelled observations from 1 lineage; 6 facts keyed by a name refused as a condition: access.x.coalesced (x is a name of the kernel or its spec), access.x.coalesced_after (x is a name of the kernel or its spec), access.x.vector_width (x is a name of the kernel or its spec) and 3 more",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = 0.0,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 0.99879666033635, 1.239780695197 },
      max = 1.239499685089,
      median = 1.04506417634895,
      min = 1.0013217066134,
      n = 6,
    },
  },
  evidence = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 },
  guards = {},
  id = "sequential_addressing",
  intent = "let the first s threads fold the upper half at each tree step, so shared-memory accesses are consecutive and conflict-free",
  materialize = {
    transform = "sequential_addressing",
  },
  observations = {
    file = "sequential_addressing.observations.jsonl",
    n = 10,
    sha256 = "862c5920c4f32f8a94530e7f9fd1b63a498bde648c07c1984ba49aa2350ee036",
  },
  pattern = {
    transform = "sequential_addressing",
  },
  preconditions = {
    { "registers_after", "<", 14,
      blocks = false,
      evidence = { 1, 2, 3, 4, 5, 10 },
      support = {
        helped = 3,
        not_helped = 3,
      },
      why = "held wherever it helped (3 of 3), and fails where it did not: registers ≥ 14 per thread after the change; it only ranks: seen in 1 lineage, with no wrong result",
    },
  },
  schema = 1,
  status = "learned",
}
