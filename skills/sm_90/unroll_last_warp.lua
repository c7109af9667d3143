-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 0,
    level = "low",
    lineages = 1,
    supporting = 4,
    why = "helped 4 of 4 labelled observations from 1 lineage; it never failed to help, so no precondition could be learned",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = 0.0,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 1.0425164155267, 1.2925057951125 },
      max = 1.2917544778871,
      median = 1.28184122612135,
      min = 1.0598290598291,
      n = 4,
    },
  },
  evidence = { 1, 2, 3, 4 },
  guards = {},
  id = "unroll_last_warp",
  intent = "finish the last six steps of a shared-memory tree in warp 0 ordered by __syncwarp, saving six block-wide barriers",
  materialize = {
    transform = "unroll_last_warp",
  },
  observations = {
    file = "unroll_last_warp.observations.jsonl",
    n = 4,
    sha256 = "19a0db14c3ba7af96acdf96847d8057b3ff17200404988950e8738bee55118b0",
  },
  pattern = {
    transform = "unroll_last_warp",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
