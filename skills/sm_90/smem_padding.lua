-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 0,
    level = "low",
    lineages = 1,
    supporting = 4,
    why = "helped 4 of 4 labelled observations from 1 lineage; it never failed to help, so no precondition could be learned",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = 0.0,
      smem_per_block = 128.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 1.3896126589485, 1.6840277777778 },
      max = 1.6770292207792,
      median = 1.6131010513439499,
      min = 1.3950373509913,
      n = 4,
    },
  },
  evidence = { 1, 2, 3, 4 },
  guards = {},
  id = "smem_padding",
  intent = "pad a shared 2-D tile by one column so column-wise accesses of a warp hit 32 different banks",
  materialize = {
    transform = "smem_padding",
  },
  observations = {
    file = "smem_padding.observations.jsonl",
    n = 4,
    sha256 = "b709964eb4e20694cac4274d5d7157b12965303a44b771d02346b3a3d72929f8",
  },
  pattern = {
    transform = "smem_padding",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
