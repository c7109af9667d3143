-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 1,
    level = "low",
    lineages = 1,
    supporting = 4,
    why = "helped 4 of 5 labelled observations from 1 lineage; 1 fact keyed by a name refused as a condition: size.n (n is a name of the kernel or its spec)",
  },
  effect = {
    resources = {
      occupancy = 0,
      registers = 0,
      smem_per_block = 0,
      spill_stores = 0,
    },
    speedup = {
      ci = { 0.94166666666667, 2.5047733367875 },
      max = 2.5008975539425,
      median = 1.862678734001,
      min = 0.94957983193277,
      n = 5,
    },
  },
  evidence = { 1, 2, 3, 4, 5 },
  guards = {
    { "launch.blocks", "<", 262400,
      blocks = false,
      evidence = { 1, 2, 3, 4, 5 },
      source = "probe",
      support = {
        helped = 4,
        not_helped = 1,
      },
      why = "slowed reduction v5_complete_unroll.cu -> v6_grid_stride.cu (at bench 2 (n=262144)) by 0.95x at launch.blocks = 512: launch.blocks < 262400 (elements reduced into one output < 67313664 after the change alike), while it paid where launch.blocks ≥ 524288 (1.91x); it only ranks: seen in 1 lineage, with no wrong result",
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
    sha256 = "d36135ed08b93e9aa525af82b328c1beab59981e4917c260c4773e6b343d2bc1",
  },
  pattern = {
    transform = "grid_stride_reduce",
  },
  preconditions = {
    { "launch.blocks", ">=", 262400,
      blocks = false,
      evidence = { 1, 2, 3, 4, 5 },
      support = {
        helped = 4,
        not_helped = 1,
      },
      why = "held wherever it helped (4 of 4), and fails where it did not: launch.blocks < 262400; it only ranks: seen in 1 lineage, with no wrong result",
    },
  },
  schema = 1,
  status = "learned",
}
