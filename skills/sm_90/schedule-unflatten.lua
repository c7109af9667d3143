-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 2,
    level = "low",
    lineages = 1,
    supporting = 0,
    why = "helped 0 of 2 labelled observations from 1 lineage; it never helped, so no precondition could be learned",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = -5.0,
      smem_per_block = 1.36e+03,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 0.52938940550859, 0.83524037109924 },
      max = 0.83474363657529,
      median = 0.6821408851434301,
      min = 0.52953813371157,
      n = 2,
    },
  },
  evidence = { 1, 2 },
  guards = {},
  id = "schedule-unflatten",
  intent = "launch a multi-dimensional grid instead of dividing a flat index",
  materialize = {
    params = {
      block = "32x8",
    },
    schedule = "unflatten",
  },
  observations = {
    file = "schedule-unflatten.observations.jsonl",
    n = 2,
    sha256 = "ca1b2cba29b741df0692aec9d4e08ce85ab8fe46cefba3d2ee694ad457e3b7bc",
  },
  pattern = {
    schedule = "unflatten",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
  unexplained = {
    {
      evidence = { 1 },
      why = "slowed conv2d v1_coalesced.cu -> v2_smem_halo.cu (at bench 2 (C=3)) by 0.83x: no helped case to contrast it with",
    },
    {
      evidence = { 2 },
      why = "slowed conv2d v1_coalesced.cu -> v2_smem_halo.cu by 0.53x: no helped case to contrast it with",
    },
  },
}
