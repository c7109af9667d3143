-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 5,
    level = "low",
    lineages = 1,
    supporting = 5,
    why = "helped 5 of 10 labelled observations from 1 lineage; 2 facts keyed by a name refused as a condition: define.BLOCK (BLOCK is a name of the kernel or its spec), define.BLOCK_after (BLOCK is a name of the kernel or its spec)",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = 0.0,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 0.99699090830462, 1.0618572209563 },
      max = 1.0974927918143,
      median = 1.0027648034363001,
      min = 0.99934937752622,
      n = 10,
    },
  },
  evidence = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 },
  guards = {},
  id = "fast_math",
  intent = "replace accurate libm float math by the hardware's fast approximations (__expf, __fdividef, rsqrtf, ...) where the tolerance allows",
  materialize = {
    transform = "fast_math",
  },
  observations = {
    file = "fast_math.observations.jsonl",
    n = 10,
    sha256 = "7163912be91fd6e68efc75491afcbab9b44c3d6e073b4841413db532f1b91233",
  },
  pattern = {
    transform = "fast_math",
  },
  preconditions = {
    { "registers_after", "<", 48,
      blocks = false,
      evidence = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 },
      support = {
        helped = 5,
        not_helped = 5,
      },
      why = "held wherever it helped (5 of 5), and fails where it did not: registers ≥ 48 per thread after the change; it only ranks: seen in 1 lineage, with no wrong result",
    },
  },
  schema = 1,
  status = "learned",
}
