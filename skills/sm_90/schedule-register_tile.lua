-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 1,
    level = "medium",
    lineages = 2,
    supporting = 11,
    why = "helped 11 of 12 labelled observations from 2 lineages",
  },
  effect = {
    resources = {
      occupancy = -0.3125,
      registers = 15.0,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 1.1717980212088, 2.0129126500585 },
      max = 3.0623344538745,
      median = 1.7380365950493,
      min = 0.65320644173729,
      n = 12,
    },
  },
  evidence = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 },
  guards = {
    { "launch.blocks", "<", 640,
      blocks = false,
      evidence = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 },
      source = "probe",
      support = {
        helped = 11,
        not_helped = 1,
      },
      why = "slowed sgemm v3_blocktile_1d.cu -> v4_blocktile_2d.cu (at bench 2 (K=1024, M=1024, N=1024)) by 0.65x at launch.blocks = 256: launch.blocks < 640 (launch.blocks < 160 after the change alike), while it paid where launch.blocks ≥ 1024 (1.86x); it only ranks: seen in 1 lineage, with no wrong result",
    },
  },
  id = "schedule-register_tile",
  intent = "compute a tile of outputs a thread in registers, each loaded operand reused across the tile",
  materialize = {
    schedule = "register_tile",
  },
  observations = {
    file = "schedule-register_tile.observations.jsonl",
    n = 12,
    sha256 = "0d09339c2f3c1eceee68f8e9bbed39c2a9a9d66dfc66110a2cde3dc78578ab82",
  },
  pattern = {
    schedule = "register_tile",
  },
  preconditions = {
    { "launch.blocks", ">=", 640,
      blocks = false,
      evidence = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 },
      support = {
        helped = 11,
        not_helped = 1,
      },
      why = "held wherever it helped (11 of 11), and fails where it did not: launch.blocks < 640; it only ranks: seen in 1 lineage, with no wrong result",
    },
  },
  schema = 1,
  status = "learned",
}
