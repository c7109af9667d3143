-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 3,
    level = "low",
    lineages = 1,
    supporting = 1,
    why = "helped 1 of 4 labelled observations from 1 lineage; one success cannot say what made it pay, so no precondition was learned",
  },
  effect = {
    resources = {
      occupancy = -0.125,
      registers = 28.0,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 0.88389813524758, 1.0836907224064 },
      max = 1.0831232532355,
      median = 0.922065110941755,
      min = 0.88451319372454,
      n = 4,
    },
  },
  evidence = { 1, 2, 3, 4, 5, 6 },
  guards = {
    { "spill_stores_after", "<", 8,
      blocks = false,
      evidence = { 2, 3, 4 },
      source = "walk",
      support = {
        helped = 1,
        not_helped = 2,
      },
      why = "slowed conv2d undo register_prefetch conv2d:load_slice -> undo launch_bounds conv2d by 0.92x at spill_stores = 0 B after the change; slowed conv2d undo register_prefetch conv2d:load_slice -> undo pragma_unroll conv2d:for#6 by 0.88x at spill_stores = 0 B after the change: spill_stores < 8 B after the change, while it paid where spill_stores ≥ 16 B after the change (1.08x); it only ranks: seen in 1 lineage, with no wrong result",
    },
    { "spill_stores_after", ">=", 48,
      blocks = false,
      evidence = { 1, 3 },
      source = "probe",
      support = {
        helped = 1,
        not_helped = 1,
      },
      why = "slowed conv2d v8_winograd.cu -> v8_winograd.cu + register_prefetch conv2d:load_slice by 0.92x at spill_stores = 80 B after the change: spill_stores ≥ 48 B after the change, while it paid where spill_stores ≤ 16 B after the change (1.08x); it only ranks: seen in 1 lineage, with no wrong result",
    },
  },
  id = "register_prefetch",
  intent = "load the next iteration's operands into registers before the current iteration's compute, so global latency overlaps the math",
  materialize = {
    transform = "register_prefetch",
  },
  observations = {
    file = "register_prefetch.observations.jsonl",
    n = 6,
    sha256 = "4bd178770cecd5d9b9cce6142d85ec5c28c5378d110fcfc2407d5a7617338b65",
  },
  pattern = {
    transform = "register_prefetch",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
