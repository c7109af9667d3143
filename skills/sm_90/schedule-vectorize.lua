-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 3,
    level = "high",
    lineages = 6,
    supporting = 13,
    why = "helped 13 of 16 labelled observations from 6 lineages",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = -1.5,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 1.0034618089508, 1.1977549226321 },
      max = 1.7770634288542,
      median = 1.1487504174802,
      min = 0.97645185205525,
      n = 16,
    },
  },
  evidence = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 },
  guards = {
    { "profile.pct_of_roofline_after", "<", 62.537989862619,
      blocks = false,
      evidence = { 5, 8, 9, 13, 14, 15, 16 },
      source = "probe",
      support = {
        helped = 6,
        not_helped = 1,
      },
      why = "slowed softmax v2_shuffle_reduce.cu -> v2_shuffle_reduce.cu + vectorize softmax:cols by 0.98x at profile.pct_of_roofline = 62.533 % after the change: profile.pct_of_roofline < 62.538 % after the change, while it paid where profile.pct_of_roofline ≥ 62.543 % after the change (1.15x) (though it also holds where it helped 2 times); it only ranks: seen in 1 lineage, with no wrong result",
    },
  },
  id = "schedule-vectorize",
  intent = "access global memory as float2/float4: fewer, wider instructions",
  materialize = {
    schedule = "vectorize",
  },
  observations = {
    file = "schedule-vectorize.observations.jsonl",
    n = 16,
    sha256 = "bdda65f748549c6f101fdb52d4dc7f7273594a58f80b24ad5941a1376cab7987",
  },
  pattern = {
    schedule = "vectorize",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
