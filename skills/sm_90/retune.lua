-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 26,
    level = "low",
    supporting = 15,
    why = "helped 15 of 41 labelled observations; 2 facts keyed by a name refused as a condition: define.ALPHA (ALPHA is a name of the kernel or its spec), shared.tile.bank_ways (tile is a name of the kernel or its spec)",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = 0.0,
      smem_per_block = 2.0,
      spill_stores = 0.0,
    },
    speedup = {
      max = 1.8446283251625,
      median = 1.0002508428488,
      min = 0.77556165503225,
      n = 37,
    },
  },
  evidence = {
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26,
    27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48,
  },
  guards = {
    { "launch.blocks", "<", 660,
      evidence = { 1, 2, 12, 13, 14, 18, 19, 20, 25, 26, 29, 36, 48 },
      source = "walk",
      support = {
        helped = 12,
        not_helped = 1,
      },
      why = "slowed bfs undo retune define:ALPHA -> undo retune define:BLOCK by 0.997x at launch.blocks = 1: launch.blocks < 660 (launch.blocks < 578 after the change alike), while it paid where launch.blocks ≥ 1056 (1.18x) (though it also holds where it helped 3 times)",
    },
    { "occupancy_after", "<", 0.625,
      evidence = { 1, 3, 5, 7, 9, 11, 12, 13, 14, 15, 18, 19, 20, 25, 26, 29, 36, 48 },
      source = "walk",
      support = {
        helped = 15,
        not_helped = 3,
      },
      why = "was rejected (compile_error) on bfs undo retune define:BLOCK -> undo retune define:BLOCK at occupancy = 50 % after the change; was rejected (compile_error) on bfs undo retune define:BLOCK -> undo pragma_unroll block_scan:for#2 at occupancy = 50 % after the change; was rejected (wrong) on raytrace undo retune define:BLOCK -> undo launch_bounds raytrace at occupancy = 50 % after the change: occupancy < 62.5 % after the change, while it paid where occupancy ≥ 75 % after the change (1.24x)",
    },
    { "registers", ">=", 42,
      evidence = { 1, 3, 5, 7, 12, 13, 14, 16, 18, 19, 20, 25, 26, 29, 30, 31, 32, 36, 38, 40, 42, 44, 45, 48 },
      source = "walk",
      support = {
        helped = 15,
        not_helped = 9,
      },
      why = "was rejected (wrong) on raytrace undo retune define:BLOCK -> undo retune define:BLOCK at registers = 43 per thread; slowed softmax undo retune define:BLOCK -> v9_fused_stats.cu by 0.98x at registers = 64 per thread; slowed softmax undo retune define:BLOCK -> undo pragma_unroll cached_row:for#2 by 0.94x at registers = 64 per thread; and 6 more like them: registers ≥ 42 per thread, while it paid where registers ≤ 41 per thread (1.24x)",
    },
    { "role.outputs_per_thread_slot", ">=", 131.87878787878788,
      evidence = { 1, 3, 5, 7, 12, 13, 14, 18, 19, 20, 25, 26, 29, 39, 41, 43, 46 },
      source = "walk",
      support = {
        helped = 13,
        not_helped = 4,
      },
      why = "slowed transpose undo retune define:TILE -> undo smem_padding transpose:tile by 0.78x at outputs per thread the device holds = 248.242; slowed transpose undo retune define:TILE -> undo pragma_unroll transpose:for#3 by 0.78x at outputs per thread the device holds = 248.242; slowed transpose undo retune define:TILE -> undo pragma_unroll transpose:for#1 by 0.78x at outputs per thread the device holds = 248.242; and 1 more like it: outputs per thread the device holds ≥ 131.879 (outputs per thread the device holds ≥ 131.879 after the change alike), while it paid where outputs per thread the device holds ≤ 15.515 (1.40x) (though it also holds where it helped 2 times)",
    },
  },
  id = "retune",
  intent = "retune a power-of-two tile, block or per-thread #define within the kernel's constraints, since the best value depends on size and GPU",
  materialize = {
    params = {
      value = 64,
    },
    transform = "retune",
  },
  observations = {
    file = "retune.observations.jsonl",
    n = 48,
    sha256 = "286a2da1de6a90564dfda7183d44b4b38d249f4d72e0e3547059e31902fd9942",
  },
  pattern = {
    transform = "retune",
  },
  preconditions = {
    { "launch.threads", "<", 192,
      evidence = { 1, 3, 4, 5, 7, 12, 13, 14, 17, 18, 19, 20, 21, 25, 26, 29, 30, 31, 32, 36, 48 },
      support = {
        helped = 15,
        not_helped = 6,
      },
      why = "held wherever it helped (15 of 15), and fails where it did not: launch.threads ≥ 192",
    },
    { "occupancy_after", ">=", 0.625,
      evidence = { 1, 3, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 19, 20, 25, 26, 27, 29, 30, 31, 32, 36, 48 },
      support = {
        helped = 15,
        not_helped = 10,
      },
      why = "held wherever it helped (15 of 15), and fails where it did not: occupancy < 62.5 % after the change",
    },
    { "registers", "<", 42,
      evidence = {
        1, 3, 5, 7, 12, 13, 14, 16, 18, 19, 20, 25, 26, 29, 30, 31, 32, 36, 37, 38, 40, 42, 44, 45,
        48,
      },
      support = {
        helped = 15,
        not_helped = 10,
      },
      why = "held wherever it helped (15 of 15), and fails where it did not: registers ≥ 42 per thread",
    },
  },
  schema = 1,
  status = "learned",
}
