-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 12,
    level = "low",
    supporting = 1,
    why = "helped 1 of 13 labelled observations; one success cannot say what made it pay, so no precondition was learned",
  },
  effect = {
    resources = {
      occupancy = 0,
      registers = 0,
      smem_per_block = 0,
      spill_stores = 0,
    },
    speedup = {
      max = 1.0684231956839,
      median = 0.92545419468034,
      min = 0.45578348453568,
      n = 13,
    },
  },
  evidence = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13 },
  guards = {
    { "registers_after", "<", 52,
      evidence = { 1, 3, 4, 5 },
      source = "probe",
      support = {
        helped = 1,
        not_helped = 3,
      },
      why = "slowed bfs v0_naive.cu -> v0_naive.cu + persistent_grid bfs by 0.89x at registers = 19 per thread after the change; slowed conv2d v0_naive.cu -> v0_naive.cu + persistent_grid conv2d by 0.98x at registers = 48 per thread after the change; slowed conv2d v1_coalesced.cu -> v1_coalesced.cu + persistent_grid conv2d by 0.46x at registers = 40 per thread after the change: registers < 52 per thread after the change, while it paid where registers ≥ 56 per thread after the change (1.07x)",
    },
    { "size.cols", ">=", 4608,
      evidence = { 5, 6, 7, 8, 9, 10, 11, 12, 13 },
      source = "walk",
      support = {
        helped = 1,
        not_helped = 8,
      },
      why = "slowed softmax v0_naive.cu -> v0_naive.cu + persistent_grid softmax by 0.95x at cols = 8192; slowed softmax v1_block_per_row.cu -> v1_block_per_row.cu + persistent_grid softmax by 0.80x at cols = 8192; slowed softmax v5_register_cache.cu -> v6_persistent.cu (at bench 3 (cols=32768)) by 0.99x at cols = 32768; and 5 more like them: cols ≥ 4608, while it paid where cols ≤ 1024 (1.07x)",
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
    sha256 = "4952f2967110f2e2cd8b4e6f9053de9992e35bdc4f41f30b141ab1ad01e973b2",
  },
  pattern = {
    transform = "persistent_grid",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
