-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 0,
    level = "low",
    lineages = 1,
    supporting = 3,
    why = "helped 3 of 3 labelled observations from 1 lineage; it never failed to help, so no precondition could be learned",
  },
  effect = {
    resources = {
      occupancy = 0,
      registers = -2,
      smem_per_block = 0,
      spill_stores = 0,
    },
    speedup = {
      ci = { 1.2702702702703, 1.666702293614 },
      max = 1.6662105283084,
      median = 1.6586108855821,
      min = 1.2771618625277,
      n = 3,
    },
  },
  evidence = { 1, 2, 3 },
  guards = {},
  id = "strided_index",
  intent = "make the threads that work at each step of a shared-memory tree reduction contiguous, so warps retire instead of diverging",
  materialize = {
    transform = "strided_index",
  },
  observations = {
    file = "strided_index.observations.jsonl",
    n = 3,
    sha256 = "d7f30a9a0f9e889c3ff47d1449c991a29129c18be4c2921487b44bf92920b9c1",
  },
  pattern = {
    transform = "strided_index",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
