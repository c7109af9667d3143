-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 0,
    level = "seen once",
    supporting = 1,
    why = "one observation: nothing to generalize from; it never failed to help, so no precondition could be learned",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = 0,
      smem_per_block = 0,
      spill_stores = 0,
    },
    speedup = {
      max = 1.0454236520163,
      median = 1.0454236520163,
      min = 1.0454236520163,
      n = 1,
    },
  },
  evidence = { 1 },
  guards = {},
  id = "template-softmax-v9_fused_stats-hunk6",
  intent = "the change of softmax revert hunk 6 of v9_fused_stats.cu -> v9_fused_stats.cu, as the walk saw it",
  materialize = {
    template = {
      after = "",
      before = "\n  m = width == 0 ? warp_max(m) : group_max(m, buf, first, width);",
    },
  },
  observations = {
    file = "template-softmax-v9_fused_stats-hunk6.observations.jsonl",
    n = 1,
    sha256 = "af32e893782217b66eb03d1cdab3e63e501940d77c04f232761ffa9d7e3d9ad9",
  },
  pattern = {
    source = "\n  m = width == 0 ? warp_max(m) : group_max(m, buf, first, width);",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
