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
      occupancy = 0,
      registers = 0,
      smem_per_block = 0,
      spill_stores = 0,
    },
    speedup = {
      ci = { 0.99693050269224, 1.001247702302 },
      max = 0.99947585664679,
      median = 0.99947585664679,
      min = 0.99947585664679,
      n = 1,
    },
  },
  evidence = { 1 },
  guards = {},
  id = "template-reduction-v8_warp_shuffle-hunk2",
  intent = "the change of reduction v7_float4.cu, hunk 2 at line 9 reverted -> v8_warp_shuffle.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n\nstatic_assert((BLOCK & (BLOCK - 1)) == 0 && BLOCK >= 32, \"the tree needs a power-of-two block\");",
      before = "\n\nstatic_assert(BLOCK >= 64 && (BLOCK & (BLOCK - 1)) == 0, \"the tree needs a power-of-two block of at least 64\");",
    },
  },
  observations = {
    file = "template-reduction-v8_warp_shuffle-hunk2.observations.jsonl",
    n = 1,
    sha256 = "6926fcc8cb7699921f55a0d1335cfb96490a5c16a60de8052a13e9bb10829af8",
  },
  pattern = {
    source = "\n\nstatic_assert(BLOCK >= 64 && (BLOCK & (BLOCK - 1)) == 0, \"the tree needs a power-of-two block of at least 64\");",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
