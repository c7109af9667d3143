-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 9,
    level = "low",
    supporting = 5,
    why = "helped 5 of 14 labelled observations",
  },
  effect = {
    resources = {
      occupancy = 0,
      registers = 0,
      smem_per_block = -992,
      spill_stores = 0,
    },
    speedup = {
      max = 1.3956624194441,
      median = 1.00071024562745,
      min = 0.99874034712817,
      n = 14,
    },
  },
  evidence = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17 },
  guards = {},
  id = "warp_shuffle",
  intent = "reduce each warp with shuffles and pass one value per warp through shared memory, replacing the barrier-per-step shared-memory tree",
  materialize = {
    transform = "warp_shuffle",
  },
  observations = {
    file = "warp_shuffle.observations.jsonl",
    n = 17,
    sha256 = "7585edf3fd6758e62c5ad3e2728a8cba54db410c7695123187d14239a46b557e",
  },
  pattern = {
    transform = "warp_shuffle",
  },
  preconditions = {
    { "launch.blocks", ">=", 4624,
      evidence = { 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 15, 16, 17 },
      support = {
        helped = 5,
        not_helped = 8,
      },
      why = "held wherever it helped (5 of 5), and fails where it did not: launch.blocks < 4624",
    },
  },
  schema = 1,
  status = "learned",
}
