-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 22,
    level = "low",
    lineages = 5,
    supporting = 2,
    why = "helped 2 of 24 labelled observations from 5 lineages; 1 fact keyed by a name refused as a condition: access.A.coalesced (A is a name of the kernel or its spec)",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = 0.0,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 0.99406990950878, 1.0014382213447 },
      max = 1.0463275185429,
      median = 0.9997389903714451,
      min = 0.47872584878717,
      n = 24,
    },
  },
  evidence = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24 },
  guards = {
    { "launch.blocks", ">=", 33280,
      blocks = false,
      evidence = { 7, 8, 9, 18 },
      source = "probe",
      support = {
        helped = 2,
        not_helped = 2,
      },
      why = "slowed conv2d v1_coalesced.cu -> v1_coalesced.cu + ldg conv2d:x by 0.99x at launch.blocks = 50176; slowed conv2d v0_naive.cu -> v0_naive.cu + ldg conv2d:x by 0.999x at launch.blocks = 50176: launch.blocks ≥ 33280 (launch.blocks ≥ 33280 after the change alike), while it paid where launch.blocks ≤ 16384 (1.01x); it only ranks: seen in 1 lineage, with no wrong result",
    },
    { "role.reduction.length", "<", 464,
      blocks = false,
      evidence = { 9, 18, 19 },
      source = "probe",
      support = {
        helped = 2,
        not_helped = 1,
      },
      why = "slowed sgemm v2_smem_tiles.cu -> v2_smem_tiles.cu + ldg sgemm:A by 0.999x at elements reduced into one output = 128: elements reduced into one output < 464, while it paid where elements reduced into one output ≥ 672 (1.01x); it only ranks: seen in 1 lineage, with no wrong result",
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
    sha256 = "3ec03d180f2a4a9a45d10106c97653bae7c8f64ddfa41510a495bc5a636da67b",
  },
  pattern = {
    transform = "ldg",
  },
  preconditions = {
    { "launch.blocks", "<", 33280,
      blocks = true,
      evidence = { 7, 8, 9, 11, 12, 13, 14, 15, 16, 18, 21, 22, 23, 24 },
      support = {
        helped = 2,
        not_helped = 12,
      },
      why = "held wherever it helped (2 of 2), and fails where it did not: launch.blocks ≥ 33280; it blocks: seen in 3 lineages",
    },
    { "role.intensity", ">=", 145.17818642993024,
      blocks = true,
      evidence = { 1, 2, 3, 4, 5, 6, 9, 11, 12, 13, 14, 15, 16, 17, 18, 21, 22, 23, 24 },
      support = {
        helped = 2,
        not_helped = 17,
      },
      why = "held wherever it helped (2 of 2), and fails where it did not: arithmetic intensity (flops/byte) < 145.178; it blocks: seen in 3 lineages",
    },
    { "role.reduction.length", ">=", 216,
      blocks = false,
      evidence = { 9, 10, 18, 19 },
      support = {
        helped = 2,
        not_helped = 2,
      },
      why = "held wherever it helped (2 of 2), and fails where it did not: elements reduced into one output < 216; it only ranks: seen in 2 lineages, with no wrong result",
    },
  },
  schema = 1,
  status = "learned",
  unexplained = {
    {
      evidence = { 20 },
      why = "slowed sgemm v1_coalesced.cu -> v1_coalesced.cu + ldg sgemm:A by 0.48x: no fact separates it from the helped cases",
    },
  },
}
