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
      ci = { 1.0849538583584, 1.3293057406165 },
      max = 1.3282438206633,
      median = 1.20773912464395,
      min = 1.0872344286246,
      n = 2,
    },
  },
  evidence = { 1, 2 },
  guards = {},
  id = "while_while",
  intent = "split the if-if BVH traversal loop into a descend-through-inner-nodes loop and a leaf loop, so a warp's lanes run node steps and leaf tests together",
  materialize = {
    transform = "while_while",
  },
  observations = {
    file = "while_while.observations.jsonl",
    n = 2,
    sha256 = "5daff17289ed8ada021fb607d726f4189999d8561a974e73f49d1217dc0687cd",
  },
  pattern = {
    transform = "while_while",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
