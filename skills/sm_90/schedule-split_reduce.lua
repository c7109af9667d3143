-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 9,
    level = "low",
    lineages = 3,
    supporting = 10,
    why = "helped 10 of 19 labelled observations from 3 lineages; 2 facts keyed by a name refused as a condition: define.BLOCK (BLOCK is a name of the kernel or its spec), define.BLOCK_after (BLOCK is a name of the kernel or its spec)",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = 0.0,
      smem_per_block = -992.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 0.99843314785527, 2.7869644406437 },
      max = 27.405043227265,
      median = 1.0193761868483,
      min = 0.99874034712817,
      n = 19,
    },
  },
  evidence = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22 },
  guards = {},
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
    n = 22,
    sha256 = "e177b78548ce42d7e13527f302f7d3bdb9e1bc04add586a00255361eeade7a56",
  },
  pattern = {
    schedule = "split_reduce",
  },
  preconditions = {
    { "launch.threads", ">=", 192,
      blocks = false,
      evidence = { 1, 2, 5, 7, 9, 10, 11, 12, 15, 20, 21, 22 },
      support = {
        helped = 10,
        not_helped = 2,
      },
      why = "held wherever it helped (10 of 10), and fails where it did not: launch.threads < 192; it only ranks: seen in 1 lineage, with no wrong result",
    },
    { "registers_after", ">=", 15,
      blocks = false,
      evidence = { 1, 2, 3, 5, 7, 9, 10, 11, 12, 21, 22 },
      support = {
        helped = 10,
        not_helped = 1,
      },
      why = "held wherever it helped (10 of 10), and fails where it did not: registers < 15 per thread after the change; it only ranks: seen in 1 lineage, with no wrong result",
    },
  },
  schema = 1,
  status = "learned",
}
