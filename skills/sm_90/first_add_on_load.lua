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
      registers = 4,
      smem_per_block = 0,
      spill_stores = 0,
    },
    speedup = {
      ci = { 1.088, 1.9532564489806 },
      max = 1.9524200946178,
      median = 1.899228162476,
      min = 1.0967741935484,
      n = 5,
    },
  },
  evidence = { 1, 2, 3, 4, 5 },
  guards = {},
  id = "first_add_on_load",
  intent = "add two elements a block apart while loading, so the reduction runs half the blocks and no thread idles in the first tree step",
  materialize = {
    transform = "first_add_on_load",
  },
  observations = {
    file = "first_add_on_load.observations.jsonl",
    n = 5,
    sha256 = "2ccc7debce18a795662f72a47f44e00e1c26f3f81ce0864583ba57a4b150ffaa",
  },
  pattern = {
    transform = "first_add_on_load",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
