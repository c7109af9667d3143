-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 1,
    level = "medium",
    supporting = 4,
    why = "helped 4 of 5 labelled observations",
  },
  effect = {
    resources = {
      occupancy = 0,
      registers = 0,
      smem_per_block = 0,
      spill_stores = 0,
    },
    speedup = {
      max = 2.5008975539425,
      median = 1.862678734001,
      min = 0.94957983193277,
      n = 5,
    },
  },
  evidence = { 1, 2, 3, 4, 5 },
  guards = {
    { "size.n", "<", 134348800,
      evidence = { 1, 2, 3, 4, 5 },
      source = "probe",
      support = {
        helped = 4,
        not_helped = 1,
      },
      why = "slowed reduction v5_complete_unroll.cu -> v6_grid_stride.cu (at bench 2 (n=262144)) by 0.95x at n = 262144: n < 134348800, while it paid where n ≥ 268435456 (1.91x)",
    },
  },
  id = "grid_stride_reduce",
  intent = "launch a fixed grid whose threads stride over the whole array, so each adds many elements before one block tree",
  materialize = {
    transform = "grid_stride_reduce",
  },
  observations = {
    file = "grid_stride_reduce.observations.jsonl",
    n = 5,
    sha256 = "6d4a2235f51f1677d195f008122dfd7f96c905a1055326c179519dc327e88daa",
  },
  pattern = {
    transform = "grid_stride_reduce",
  },
  preconditions = {
    { "size.n", ">=", 134348800,
      evidence = { 1, 2, 3, 4, 5 },
      support = {
        helped = 4,
        not_helped = 1,
      },
      why = "held wherever it helped (4 of 4), and fails where it did not: n < 134348800",
    },
  },
  schema = 1,
  status = "learned",
}
