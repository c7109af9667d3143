-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 0,
    level = "seen once",
    lineages = 1,
    supporting = 1,
    why = "one observation: nothing to generalize from; it never failed to help, so no precondition could be learned",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = 1,
      smem_per_block = 0,
      spill_stores = 0,
    },
    speedup = {
      ci = { 1.2602049268701, 1.2644611463157 },
      max = 1.2623295915465,
      median = 1.2623295915465,
      min = 1.2623295915465,
      n = 1,
    },
  },
  evidence = { 1 },
  guards = {},
  id = "template-raytrace-v6_speculative-hunk6",
  intent = "the change of raytrace revert hunk 6 of v6_speculative.cu -> v6_speculative.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n      if (e < 0 && !parked) {\n        parked = true;\n        parked_e = e;\n        e = stack[--sp];\n      }",
      before = "",
    },
  },
  observations = {
    file = "template-raytrace-v6_speculative-hunk6.observations.jsonl",
    n = 1,
    sha256 = "60699fa879f12ef9ea0f2f602caae31ff92a9ff12a20f710529c0b961b68a022",
  },
  pattern = {
    source = "\n      if (e < 0 && !parked) {\n        parked = true;\n        parked_e = e;\n        e = stack[--sp];\n      }",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
