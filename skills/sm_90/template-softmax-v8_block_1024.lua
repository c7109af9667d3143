-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 2,
    level = "low",
    lineages = 1,
    supporting = 1,
    why = "helped 1 of 3 labelled observations from 1 lineage; one success cannot say what made it pay, so no precondition was learned",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = 0,
      smem_per_block = 96,
      spill_stores = 0,
    },
    speedup = {
      ci = { 0.95680074114457, 1.7612470598677 },
      max = 1.759790955972,
      median = 0.96753246753247,
      min = 0.96099321395887,
      n = 3,
    },
  },
  evidence = { 1, 2, 3 },
  guards = {
    { "role.outputs_per_thread_slot", "<", 620.6060606060606,
      blocks = false,
      evidence = { 1, 2, 3 },
      source = "walk",
      support = {
        helped = 1,
        not_helped = 2,
      },
      why = "slowed softmax v7_row_groups.cu -> v8_block_1024.cu (at bench 2 (cols=1024)) by 0.97x at outputs per thread the device holds = 31.03; slowed softmax v7_row_groups.cu -> v8_block_1024.cu by 0.96x at outputs per thread the device holds = 248.242: outputs per thread the device holds < 620.606 (outputs per thread the device holds < 620.606 after the change, elements reduced into one output < 81920, elements reduced into one output < 322560 after the change alike), while it paid where outputs per thread the device holds ≥ 992.97 (1.76x); it only ranks: seen in 1 lineage, with no wrong result",
    },
  },
  id = "template-softmax-v8_block_1024",
  intent = "the change of softmax v7_row_groups.cu -> v8_block_1024.cu, as the walk saw it",
  materialize = {
    template = {
      after = "// v8: a larger block: BLOCK goes from 256 to 1024 threads (MIN_BLOCKS from 4 to 1, keeping 64 registers per thread), so the block's registers hold a whole row of up to 1024 * VEC * 4 = 32768 columns (one block per SM) and the longest rows are read once instead of twice.\n// y[r][c] = exp(x[r][c] - max_r) / sum_c exp(x[r][c] - max_r), row-major rows x cols.\n// Three paths, chosen from cols inside the kernel (uniform over the grid):\n//   cols4 <= 32 * VEC          one warp per row, the row in registers, no barrier;\n//   cols4 <= BLOCK * VEC       a group of W warps per row, the row in registers;\n//   larger                     the whole block per row, online pass + output pass.\n// @kl launch grid(GRID_BLOCKS) block(BLOCK)\n// @kl requires cols % 4 == 0\n#define BLOCK 1024\n/* ... */\n\n#define MIN_BLOCKS 1                   // resident blocks per SM: 1024 threads, so <= 64 registers each",
      before = "// v7: rows sized to the work: each row goes to the smallest power-of-two group of warps whose registers hold it (one warp per row for cols <= 128 * VEC, reduced by shuffles alone), and a block serves WARPS / group rows at once.\n// y[r][c] = exp(x[r][c] - max_r) / sum_c exp(x[r][c] - max_r), row-major rows x cols.\n// Three paths, chosen from cols inside the kernel (uniform over the grid):\n//   cols4 <= 32 * VEC          one warp per row, the row in registers, no barrier;\n//   cols4 <= BLOCK * VEC       a group of W warps per row, the row in registers;\n//   larger                     the whole block per row, online pass + output pass.\n// @kl launch grid(GRID_BLOCKS) block(BLOCK)\n// @kl requires cols % 4 == 0\n#define BLOCK 256\n/* ... */\n\n#define MIN_BLOCKS 4                   // resident blocks per SM: 1024 threads, so <= 64 registers each",
    },
  },
  observations = {
    file = "template-softmax-v8_block_1024.observations.jsonl",
    n = 3,
    sha256 = "9818b1fc1c7135b151fe2c3ef6ea20c2503bd857d22a9d991f2508b78cedc53f",
  },
  pattern = {
    source = "// v7: rows sized to the work: each row goes to the smallest power-of-two group of warps whose registers hold it (one warp per row for cols <= 128 * VEC, reduced by shuffles alone), and a block serves WARPS / group rows at once.\n// y[r][c] = exp(x[r][c] - max_r) / sum_c exp(x[r][c] - max_r), row-major rows x cols.\n// Three paths, chosen from cols inside the kernel (uniform over the grid):\n//   cols4 <= 32 * VEC          one warp per row, the row in registers, no barrier;\n//   cols4 <= BLOCK * VEC       a group of W warps per row, the row in registers;\n//   larger                     the whole block per row, online pass + output pass.\n// @kl launch grid(GRID_BLOCKS) block(BLOCK)\n// @kl requires cols % 4 == 0\n#define BLOCK 256\n/* ... */\n\n#define MIN_BLOCKS 4                   // resident blocks per SM: 1024 threads, so <= 64 registers each",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
