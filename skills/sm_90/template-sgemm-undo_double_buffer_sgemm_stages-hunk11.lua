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
  id = "template-sgemm-undo_double_buffer_sgemm_stages-hunk11",
  intent = "the change of sgemm v5_vectorized.cu, hunk 11 at line 22 reverted -> undo double_buffer sgemm:stages, as the walk saw it",
  materialize = {
    template = {
      after = "\nstatic_assert(WM == LANES_M * TM && WN == LANES_N * TN, \"warp tile must be covered by its lanes\");",
      before = "",
    },
  },
  observations = {
    file = "template-sgemm-undo_double_buffer_sgemm_stages-hunk11.observations.jsonl",
    n = 1,
    sha256 = "1ba1939418552c4503800b15ad31172d9df13ed690f218f9fbb249ef719fd516",
  },
  pattern = {
    source = "\nstatic_assert(WM == LANES_M * TM && WN == LANES_N * TN, \"warp tile must be covered by its lanes\");",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
