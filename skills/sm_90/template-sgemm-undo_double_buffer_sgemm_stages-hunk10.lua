-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 0,
    level = "seen once",
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
    sha256 = "859f5913ccc7ad24057514de0207bc452360db598fdedbffc01ad4fb9e49449f",
  },
  pattern = {
    source = "\n\nstatic_assert(BK % 4 == 0 && BN % 4 == 0 && TM % 4 == 0 && TN % 4 == 0,\n              \"float4 paths need multiples of 4\");",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
