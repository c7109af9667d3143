-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 0,
    level = "medium",
    lineages = 3,
    supporting = 7,
    why = "helped 7 of 7 labelled observations from 3 lineages; it never failed to help, so no precondition could be learned",
  },
  effect = {
    resources = {
      occupancy = 0,
      registers = 0,
      smem_per_block = 0,
      spill_stores = 0,
    },
    speedup = {
      ci = { 2.1901518804674, 12.631897090153 },
      max = 12.623165667741,
      median = 12.293150557945,
      min = 2.1923257296088,
      n = 7,
    },
  },
  evidence = { 1, 2, 3, 4, 5, 6, 7 },
  guards = {},
  id = "coalesce",
  intent = "map threadIdx.x to the output's unit-stride index so each warp's global accesses coalesce",
  materialize = {
    transform = "coalesce",
  },
  observations = {
    file = "coalesce.observations.jsonl",
    n = 7,
    sha256 = "67e6e6fe14370919ee3b01c39830c921cb0d4408fda3fe48a6736d90f8e20aea",
  },
  pattern = {
    transform = "coalesce",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
