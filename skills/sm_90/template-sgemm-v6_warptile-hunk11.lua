-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 1,
    level = "seen once",
    lineages = 1,
    supporting = 0,
    why = "one observation: nothing to generalize from; it never helped, so no precondition could be learned",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = 0,
      smem_per_block = 0,
      spill_stores = 0,
    },
    speedup = {
      ci = { 0.99890314843506, 1.0012509531528 },
      max = 1.0004850385956,
      median = 1.0004850385956,
      min = 1.0004850385956,
      n = 1,
    },
  },
  evidence = { 1 },
  guards = {},
  id = "template-sgemm-v6_warptile-hunk11",
  intent = "the change of sgemm v5_vectorized.cu, hunk 11 at line 22 reverted -> v6_warptile.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\nstatic_assert(WM == LANES_M * TM && WN == LANES_N * TN, \"warp tile must be covered by its lanes\");",
      before = "",
    },
  },
  observations = {
    file = "template-sgemm-v6_warptile-hunk11.observations.jsonl",
    n = 1,
    sha256 = "340fafb1319f38db7d00e196bb3db5e5d0092a58c6fbf5043282ccbd9a980193",
  },
  pattern = {
    source = "\nstatic_assert(WM == LANES_M * TM && WN == LANES_N * TN, \"warp tile must be covered by its lanes\");",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
