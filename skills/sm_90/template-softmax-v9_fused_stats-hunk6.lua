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
      registers = 0,
      smem_per_block = 0,
      spill_stores = 0,
    },
    speedup = {
      ci = { 1.0383725008604, 1.0491396280503 },
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
    sha256 = "2cad273f46107b10d0239a3166247036c56e5f3f36006066f2f05d57a34d245e",
  },
  pattern = {
    source = "\n  m = width == 0 ? warp_max(m) : group_max(m, buf, first, width);",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
