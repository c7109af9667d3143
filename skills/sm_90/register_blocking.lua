-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 1,
    level = "low",
    lineages = 1,
    supporting = 5,
    why = "helped 5 of 6 labelled observations from 1 lineage",
  },
  effect = {
    resources = {
      occupancy = -0.4375,
      registers = 67.0,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 0.6519544794331, 1.8832144866241 },
      max = 1.8771857565432,
      median = 1.58732921591515,
      min = 0.65320644173729,
      n = 6,
    },
  },
  evidence = { 1, 2, 3, 4, 5, 6 },
  guards = {
    { "launch.blocks", "<", 640,
      blocks = false,
      evidence = { 1, 2, 3, 4, 5, 6 },
      source = "probe",
      support = {
        helped = 5,
        not_helped = 1,
      },
      why = "slowed sgemm v3_blocktile_1d.cu -> v4_blocktile_2d.cu (at bench 2 (K=1024, M=1024, N=1024)) by 0.65x at launch.blocks = 256: launch.blocks < 640 (launch.blocks < 160 after the change alike), while it paid where launch.blocks ≥ 1024 (1.86x); it only ranks: seen in 1 lineage, with no wrong result",
    },
  },
  id = "register_blocking",
  intent = "give each thread several outputs held in registers so each shared-memory load feeds several multiply-adds",
  materialize = {
    transform = "register_blocking",
  },
  observations = {
    file = "register_blocking.observations.jsonl",
    n = 6,
    sha256 = "41b352f242984874c243994346d7a810f5760e9dcef7193f8b00826dec1dfd75",
  },
  pattern = {
    transform = "register_blocking",
  },
  preconditions = {
    { "launch.blocks", ">=", 640,
      blocks = false,
      evidence = { 1, 2, 3, 4, 5, 6 },
      support = {
        helped = 5,
        not_helped = 1,
      },
      why = "held wherever it helped (5 of 5), and fails where it did not: launch.blocks < 640; it only ranks: seen in 1 lineage, with no wrong result",
    },
  },
  schema = 1,
  status = "learned",
}
