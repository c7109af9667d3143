-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 6,
    level = "low",
    lineages = 3,
    supporting = 1,
    why = "helped 1 of 7 labelled observations from 3 lineages; one success cannot say what made it pay, so no precondition was learned",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = 0,
      smem_per_block = 0,
      spill_stores = 0,
    },
    speedup = {
      ci = { 0.45134182827731, 1.0728895319417 },
      max = 1.0684231956839,
      median = 0.93128382671955,
      min = 0.45578348453568,
      n = 7,
    },
  },
  evidence = { 1, 2, 3, 4, 5, 6, 7 },
  guards = {
    { "registers_after", "<", 52,
      blocks = false,
      evidence = { 1, 4 },
      source = "probe",
      support = {
        helped = 1,
        not_helped = 1,
      },
      why = "slowed bfs v0_naive.cu -> v0_naive.cu + persistent_grid bfs by 0.89x at registers = 19 per thread after the change: registers < 52 per thread after the change, while it paid where registers ≥ 56 per thread after the change (1.07x); it only ranks: seen in 1 lineage, with no wrong result",
    },
    { "role.outputs_per_thread_slot", ">=", 39.27272727272727,
      blocks = false,
      evidence = { 2, 3, 4, 5, 6, 7 },
      source = "walk",
      support = {
        helped = 1,
        not_helped = 5,
      },
      why = "slowed conv2d v0_naive.cu -> v0_naive.cu + persistent_grid conv2d by 0.98x at outputs per thread the device holds = 47.515; slowed conv2d v1_coalesced.cu -> v1_coalesced.cu + persistent_grid conv2d by 0.46x at outputs per thread the device holds = 47.515; slowed softmax v5_register_cache.cu -> v6_persistent.cu (at bench 3 (cols=32768)) by 0.99x at outputs per thread the device holds = 992.97; and 2 more like them: outputs per thread the device holds ≥ 39.273 (outputs per thread the device holds ≥ 39.273 after the change alike), while it paid where outputs per thread the device holds ≤ 31.03 (1.07x); it only ranks: seen in 2 lineages, with no wrong result",
    },
  },
  id = "schedule-persist",
  intent = "the change of bfs v0_naive.cu -> v0_naive.cu + persistent_grid bfs, as the walk saw it",
  materialize = {
    schedule = "persist",
  },
  observations = {
    file = "schedule-persist.observations.jsonl",
    n = 7,
    sha256 = "7ecc2cff93f20597cb62757063865aa77a99e26f0648452604f858445cd582b1",
  },
  pattern = {
    schedule = "persist",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
