-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 4,
    level = "low",
    lineages = 3,
    supporting = 1,
    why = "helped 1 of 5 labelled observations from 3 lineages; one success cannot say what made it pay, so no precondition was learned",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = 0,
      smem_per_block = 0,
      spill_stores = 0,
    },
    speedup = {
      ci = { 0.92899280373931, 1.0201670120915 },
      max = 1.0159793026676,
      median = 0.99941508203342,
      min = 0.92968275995455,
      n = 5,
    },
  },
  evidence = { 1, 2, 3, 4, 5 },
  guards = {
    { "registers_after", ">=", 27,
      blocks = false,
      evidence = { 2, 3, 4 },
      source = "probe",
      support = {
        helped = 1,
        not_helped = 2,
      },
      why = "slowed conv2d v0_naive.cu -> v0_naive.cu + grid_stride conv2d:i by 0.998x at registers = 48 per thread after the change; slowed conv2d v1_coalesced.cu -> v1_coalesced.cu + grid_stride conv2d:i by 0.93x at registers = 40 per thread after the change: registers ≥ 27 per thread after the change, while it paid where registers ≤ 24 per thread after the change (1.005x); it only ranks: seen in 1 lineage, with no wrong result",
    },
  },
  id = "grid_stride",
  intent = "make each thread loop over items with a grid-size stride, so the kernel is correct for any grid and a capped grid reuses each thread's setup",
  materialize = {
    transform = "grid_stride",
  },
  observations = {
    file = "grid_stride.observations.jsonl",
    n = 5,
    sha256 = "a2724e6a223ef7df87ca92b4bebb7763dbf5d1969086d55dafc69eb901820ebe",
  },
  pattern = {
    transform = "grid_stride",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
