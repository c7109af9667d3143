-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 12,
    level = "low",
    lineages = 3,
    supporting = 1,
    why = "helped 1 of 13 labelled observations from 3 lineages; one success cannot say what made it pay, so no precondition was learned",
  },
  effect = {
    resources = {
      occupancy = 0,
      registers = 0,
      smem_per_block = 0,
      spill_stores = 0,
    },
    speedup = {
      ci = { 0.78183503220501, 0.99485259313153 },
      max = 1.0684231956839,
      median = 0.92545419468034,
      min = 0.45578348453568,
      n = 13,
    },
  },
  evidence = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13 },
  guards = {
    { "registers_after", "<", 52,
      blocks = false,
      evidence = { 1, 5 },
      source = "probe",
      support = {
        helped = 1,
        not_helped = 1,
      },
      why = "slowed bfs v0_naive.cu -> v0_naive.cu + persistent_grid bfs by 0.89x at registers = 19 per thread after the change: registers < 52 per thread after the change, while it paid where registers ≥ 56 per thread after the change (1.07x); it only ranks: seen in 1 lineage, with no wrong result",
    },
    { "role.outputs_per_thread_slot", ">=", 39.27272727272727,
      blocks = false,
      evidence = { 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13 },
      source = "walk",
      support = {
        helped = 1,
        not_helped = 10,
      },
      why = "slowed conv2d v0_naive.cu -> v0_naive.cu + persistent_grid conv2d by 0.98x at outputs per thread the device holds = 47.515; slowed conv2d v1_coalesced.cu -> v1_coalesced.cu + persistent_grid conv2d by 0.46x at outputs per thread the device holds = 47.515; slowed softmax v0_naive.cu -> v0_naive.cu + persistent_grid softmax by 0.95x at outputs per thread the device holds = 248.242; and 7 more like them: outputs per thread the device holds ≥ 39.273 (outputs per thread the device holds ≥ 39.273 after the change alike), while it paid where outputs per thread the device holds ≤ 31.03 (1.07x); it only ranks: seen in 2 lineages, with no wrong result",
    },
  },
  id = "persistent_grid",
  intent = "launch a fixed grid of a few waves of blocks that loops over the work items, instead of one block or thread per item",
  materialize = {
    transform = "persistent_grid",
  },
  observations = {
    file = "persistent_grid.observations.jsonl",
    n = 13,
    sha256 = "4d1f2ab43911bba9687e67880d3fd8e37c11150856b4f5b8e010a6406be6defe",
  },
  pattern = {
    transform = "persistent_grid",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
