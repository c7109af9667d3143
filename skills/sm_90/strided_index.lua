-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 0,
    level = "medium",
    supporting = 3,
    why = "helped 3 of 3 labelled observations; it never failed to help, so no precondition could be learned",
  },
  effect = {
    resources = {
      occupancy = 0,
      registers = -2,
      smem_per_block = 0,
      spill_stores = 0,
    },
    speedup = {
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
    sha256 = "1d8d7cd4dd74731a49e1139b7f0610d6e25f07b8f40195cc3cd146efe4edc35c",
  },
  pattern = {
    transform = "strided_index",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
