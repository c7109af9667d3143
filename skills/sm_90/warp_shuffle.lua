-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 9,
    level = "low",
    lineages = 2,
    supporting = 5,
    why = "helped 5 of 14 labelled observations from 2 lineages; 6 facts keyed by a name refused as a condition: access.x.coalesced (x is a name of the kernel or its spec), access.x.coalesced_after (x is a name of the kernel or its spec), access.x.vector_width (x is a name of the kernel or its spec) and 3 more",
  },
  effect = {
    resources = {
      occupancy = 0,
      registers = 0,
      smem_per_block = -992,
      spill_stores = 0,
    },
    speedup = {
      ci = { 0.99719582123355, 1.0913992771733 },
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
    sha256 = "24d3916321137da884fa23d44bfdb96bf0cae80f4c325a034f468e753b921bdd",
  },
  pattern = {
    transform = "warp_shuffle",
  },
  preconditions = {
    { "role.reduction.length", "<", 20480,
      blocks = false,
      evidence = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 15, 16, 17 },
      support = {
        helped = 5,
        not_helped = 9,
      },
      why = "held wherever it helped (5 of 5), and fails where it did not: elements reduced into one output ≥ 20480; it only ranks: seen in 2 lineages, with no wrong result",
    },
  },
  schema = 1,
  status = "learned",
}
