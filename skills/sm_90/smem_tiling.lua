-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 0,
    level = "low",
    lineages = 1,
    supporting = 3,
    why = "helped 3 of 3 labelled observations from 1 lineage; it never failed to help, so no precondition could be learned",
  },
  effect = {
    resources = {
      occupancy = 0,
      registers = 0,
      smem_per_block = 8192,
      spill_stores = 0,
    },
    speedup = {
      ci = { 1.4008580380622, 1.468613556099 },
      max = 1.4681909832578,
      median = 1.448029851529,
      min = 1.4033175345976,
      n = 3,
    },
  },
  evidence = { 1, 2, 3 },
  guards = {},
  id = "smem_tiling",
  intent = "stage T x T tiles of both operands of a matrix product in shared memory so each global element is loaded once per block",
  materialize = {
    transform = "smem_tiling",
  },
  observations = {
    file = "smem_tiling.observations.jsonl",
    n = 3,
    sha256 = "ef3c37153a62db527302f83e6ada29049c53e26b26a6e2e56e446b6c9e2c55c2",
  },
  pattern = {
    transform = "smem_tiling",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
