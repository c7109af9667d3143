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
      ci = { 0.99919159240969, 1.000999930284 },
      max = 1.0000735238367,
      median = 1.0000735238367,
      min = 1.0000735238367,
      n = 1,
    },
  },
  evidence = { 1 },
  guards = {},
  id = "template-sgemm-v6_warptile-hunk10",
  intent = "the change of sgemm v5_vectorized.cu, hunk 10 at line 18 reverted -> v6_warptile.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n\nstatic_assert(BK % 4 == 0 && TM % 4 == 0 && TN % 4 == 0, \"float4 paths need multiples of 4\");",
      before = "\n\nstatic_assert(BK % 4 == 0 && BN % 4 == 0 && TM % 4 == 0 && TN % 4 == 0,\n              \"float4 paths need multiples of 4\");",
    },
  },
  observations = {
    file = "template-sgemm-v6_warptile-hunk10.observations.jsonl",
    n = 1,
    sha256 = "7ce01461d25578312a0b774dbe92ac24ab34b2fd6447b2a1c53ce6af636b331a",
  },
  pattern = {
    source = "\n\nstatic_assert(BK % 4 == 0 && BN % 4 == 0 && TM % 4 == 0 && TN % 4 == 0,\n              \"float4 paths need multiples of 4\");",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
