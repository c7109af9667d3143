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
      occupancy = 0.0,
      registers = -2.0,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 0.96442823991487, 1.2522011438894 },
      max = 1.2513998198709,
      median = 1.1316563251279,
      min = 0.97645185205525,
      n = 6,
    },
  },
  evidence = { 1, 2, 3, 4, 5, 6 },
  guards = {
    { "profile.pct_of_roofline_after", "<", 62.537989862619,
      blocks = false,
      evidence = { 1, 4, 5, 6 },
      source = "probe",
      support = {
        helped = 3,
        not_helped = 1,
      },
      why = "slowed softmax v2_shuffle_reduce.cu -> v2_shuffle_reduce.cu + vectorize softmax:cols by 0.98x at profile.pct_of_roofline = 62.533 % after the change: profile.pct_of_roofline < 62.538 % after the change, while it paid where profile.pct_of_roofline ≥ 62.543 % after the change (1.14x); it only ranks: seen in 1 lineage, with no wrong result",
    },
  },
  id = "vectorize",
  intent = "move a row through float4 views so each thread issues one 16-byte access instead of four scalar ones",
  materialize = {
    transform = "vectorize",
  },
  observations = {
    file = "vectorize.observations.jsonl",
    n = 6,
    sha256 = "6784ee06fdd1df22a22581fb12588420a36a9cf22c54c0cb4181c25fed018b58",
  },
  pattern = {
    transform = "vectorize",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
