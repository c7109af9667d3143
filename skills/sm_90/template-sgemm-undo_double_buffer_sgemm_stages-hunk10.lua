-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 0,
    level = "seen once",
    lineages = 0,
    supporting = 0,
    why = "one observation: nothing to generalize from; it never failed to help, so no precondition could be learned",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = 0,
      smem_per_block = 0,
      spill_stores = 0,
    },
  },
  evidence = { 1 },
  guards = {},
  id = "template-sgemm-undo_double_buffer_sgemm_stages-hunk10",
  intent = "the change of sgemm v5_vectorized.cu, hunk 10 at line 18 reverted -> undo double_buffer sgemm:stages, as the walk saw it",
  materialize = {
    template = {
      after = "\n\nstatic_assert(BK % 4 == 0 && TM % 4 == 0 && TN % 4 == 0, \"float4 paths need multiples of 4\");",
      before = "\n\nstatic_assert(BK % 4 == 0 && BN % 4 == 0 && TM % 4 == 0 && TN % 4 == 0,\n              \"float4 paths need multiples of 4\");",
    },
  },
  observations = {
    file = "template-sgemm-undo_double_buffer_sgemm_stages-hunk10.observations.jsonl",
    n = 1,
    sha256 = "c364b0ce062a0f77dc3cd40915e244233d291f95d69ad87b17d37e116b3cd23e",
  },
  pattern = {
    source = "\n\nstatic_assert(BK % 4 == 0 && BN % 4 == 0 && TM % 4 == 0 && TN % 4 == 0,\n              \"float4 paths need multiples of 4\");",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
