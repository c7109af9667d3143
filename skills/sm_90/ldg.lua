-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 22,
    level = "low",
    supporting = 2,
    why = "helped 2 of 24 labelled observations",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = 0.0,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      max = 1.0463275185429,
      median = 0.9997389903714451,
      min = 0.47872584878717,
      n = 24,
    },
  },
  evidence = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24 },
  guards = {
    { "access.A.coalesced", "==", true,
      evidence = { 18, 19, 20 },
      source = "probe",
      support = {
        helped = 1,
        not_helped = 2,
      },
      why = "slowed sgemm v2_smem_tiles.cu -> v2_smem_tiles.cu + ldg sgemm:A by 0.999x where access.A.coalesced holds; slowed sgemm v1_coalesced.cu -> v1_coalesced.cu + ldg sgemm:A by 0.48x where access.A.coalesced holds: access.A.coalesced holds (access.A.coalesced holds after the change, access.C.coalesced holds, access.C.coalesced holds after the change alike), while it paid where access.A.coalesced does not hold (1.004x)",
    },
    { "launch.blocks", ">=", 33280,
      evidence = { 7, 8, 9, 18 },
      source = "probe",
      support = {
        helped = 2,
        not_helped = 2,
      },
      why = "slowed conv2d v1_coalesced.cu -> v1_coalesced.cu + ldg conv2d:x by 0.99x at launch.blocks = 50176; slowed conv2d v0_naive.cu -> v0_naive.cu + ldg conv2d:x by 0.999x at launch.blocks = 50176: launch.blocks ≥ 33280 (launch.blocks ≥ 33280 after the change alike), while it paid where launch.blocks ≤ 16384 (1.01x)",
    },
  },
  id = "ldg",
  intent = "load a read-only parameter's elements through __ldg so they come through the read-only data cache",
  materialize = {
    transform = "ldg",
  },
  observations = {
    file = "ldg.observations.jsonl",
    n = 24,
    sha256 = "2b0f0b1c7c12da9331d5e741cb58835c3bb9719dcfcafafd3d65b31815709603",
  },
  pattern = {
    transform = "ldg",
  },
  preconditions = {
    { "launch.blocks", "<", 33280,
      evidence = { 7, 8, 9, 11, 12, 13, 14, 15, 16, 18, 21, 22, 23, 24 },
      support = {
        helped = 2,
        not_helped = 12,
      },
      why = "held wherever it helped (2 of 2), and fails where it did not: launch.blocks ≥ 33280",
    },
    { "launch.blocks_after", ">=", 528.5,
      evidence = { 1, 2, 3, 4, 5, 6, 9, 18 },
      support = {
        helped = 2,
        not_helped = 6,
      },
      why = "held wherever it helped (2 of 2), and fails where it did not: launch.blocks < 528.5 after the change",
    },
    { "registers_after", ">=", 31,
      evidence = { 1, 2, 3, 4, 9, 11, 12, 13, 14, 15, 16, 17, 18, 21, 22, 23, 24 },
      support = {
        helped = 2,
        not_helped = 15,
      },
      why = "held wherever it helped (2 of 2), and fails where it did not: registers < 31 per thread after the change",
    },
  },
  schema = 1,
  status = "learned",
}
