-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 1,
    level = "medium",
    lineages = 2,
    supporting = 8,
    why = "helped 8 of 9 labelled observations from 2 lineages",
  },
  effect = {
    resources = {
      occupancy = 0,
      registers = 4,
      smem_per_block = 0,
      spill_stores = 0,
    },
    speedup = {
      ci = { 1.0189807912931, 2.2113529606255 },
      max = 2.2065036063427,
      median = 1.899228162476,
      min = 0.98857785405693,
      n = 9,
    },
  },
  evidence = { 1, 2, 3, 4, 5, 6, 7, 8, 9 },
  guards = {
    { "registers_after", ">=", 28,
      blocks = false,
      evidence = { 1, 2, 3, 4, 5, 6, 7, 9 },
      source = "probe",
      support = {
        helped = 7,
        not_helped = 1,
      },
      why = "slowed transpose v4_float4.cu -> v5_multi_float4.cu (at bench 2 (cols=2048, rows=2048)) by 0.99x at registers = 32 per thread after the change: registers ≥ 28 per thread after the change, while it paid where registers ≤ 24 per thread after the change (1.92x) (though it also holds where it helped 1 time); it only ranks: seen in 1 lineage, with no wrong result",
    },
  },
  id = "schedule-coarsen",
  intent = "compute several outputs a thread, so more independent loads are in flight",
  materialize = {
    schedule = "coarsen",
  },
  observations = {
    file = "schedule-coarsen.observations.jsonl",
    n = 9,
    sha256 = "f22b6681d90767063acdcf9cd557c09825a78e1f8659093157a9a8f9338a7294",
  },
  pattern = {
    schedule = "coarsen",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
