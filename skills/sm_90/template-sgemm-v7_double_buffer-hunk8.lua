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
      ci = { 0.99972879793073, 1.0017691140513 },
      max = 1.0006568510891,
      median = 1.0006568510891,
      min = 1.0006568510891,
      n = 1,
    },
  },
  evidence = { 1 },
  guards = {},
  id = "template-sgemm-v7_double_buffer-hunk8",
  intent = "the change of sgemm v6_warptile.cu, hunk 8 at line 67 reverted -> v7_double_buffer.cu, as the walk saw it",
  materialize = {
    template = {
      after = "  // the tile in flight\n\n  // Prologue: stage 0 holds the first tile.\n#pragma unroll",
      before = "",
    },
  },
  observations = {
    file = "template-sgemm-v7_double_buffer-hunk8.observations.jsonl",
    n = 1,
    sha256 = "37c010426110fb4f36974f4e6f703ea5d60278189421099454bbe36636851582",
  },
  pattern = {
    source = "  // the tile in flight\n\n  // Prologue: stage 0 holds the first tile.\n#pragma unroll",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
