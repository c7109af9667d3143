-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 0,
    level = "low",
    lineages = 1,
    supporting = 5,
    why = "helped 5 of 5 labelled observations from 1 lineage; it never failed to help, so no precondition could be learned",
  },
  effect = {
    resources = {
      occupancy = 0,
      registers = 0,
      smem_per_block = 0,
      spill_stores = 0,
    },
    speedup = {
      ci = { 1.0173913043478, 1.0652198051758 },
      max = 1.0647298307918,
      median = 1.0494603724321,
      min = 1.034945868165,
      n = 5,
    },
  },
  evidence = { 1, 2, 3, 4, 5 },
  guards = {},
  id = "complete_unroll",
  intent = "use the compile-time block size instead of blockDim.x so the shared-memory tree loop unrolls fully and its index math folds",
  materialize = {
    transform = "complete_unroll",
  },
  observations = {
    file = "complete_unroll.observations.jsonl",
    n = 5,
    sha256 = "fd01308a737c481c6d270c3f275888c1fba7721873c31cb51d4cde32e1877e9e",
  },
  pattern = {
    transform = "complete_unroll",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
