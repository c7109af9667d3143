-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 10,
    level = "low",
    lineages = 3,
    supporting = 14,
    why = "helped 14 of 24 labelled observations from 3 lineages; 3 facts keyed by a name refused as a condition: define.BLOCK (BLOCK is a name of the kernel or its spec), define.BLOCK_after (BLOCK is a name of the kernel or its spec), size.n (n is a name of the kernel or its spec)",
  },
  effect = {
    resources = {
      occupancy = 0,
      registers = 0,
      smem_per_block = -496,
      spill_stores = 0,
    },
    speedup = {
      ci = { 0.99856515399547, 1.9592374118982 },
      max = 27.405043227265,
      median = 1.06540720463565,
      min = 0.94957983193277,
      n = 24,
    },
  },
  evidence = {
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26,
    27,
  },
  guards = {
    { "registers_after", "<", 15,
      blocks = false,
      evidence = { 1, 3, 4, 7, 9, 10, 13, 14, 15, 16, 26, 27 },
      source = "probe",
      support = {
        helped = 11,
        not_helped = 1,
      },
      why = "slowed reduction v5_complete_unroll.cu -> v6_grid_stride.cu (at bench 2 (n=262144)) by 0.95x at registers = 14 per thread after the change: registers < 15 per thread after the change, while it paid where registers ≥ 16 per thread after the change (1.96x) (though it also holds where it helped 3 times); it only ranks: seen in 1 lineage, with no wrong result",
    },
  },
  id = "schedule-split_reduce",
  intent = "split a long reduction over a warp or a block an output, combined by shuffles and shared memory",
  materialize = {
    params = {
      block = 256,
      wpb = 8,
    },
    schedule = "split_reduce",
  },
  observations = {
    file = "schedule-split_reduce.observations.jsonl",
    n = 27,
    sha256 = "cf58fd4da8880016645c808a31b54c4017235ef97bc4e60d7ce8cf771e747c9f",
  },
  pattern = {
    schedule = "split_reduce",
  },
  preconditions = {
    { "launch.threads", ">=", 192,
      blocks = false,
      evidence = { 1, 2, 3, 4, 7, 9, 11, 13, 14, 15, 16, 19, 24, 25, 26, 27 },
      support = {
        helped = 14,
        not_helped = 2,
      },
      why = "held wherever it helped (14 of 14), and fails where it did not: launch.threads < 192; it only ranks: seen in 1 lineage, with no wrong result",
    },
  },
  schema = 1,
  status = "learned",
}
