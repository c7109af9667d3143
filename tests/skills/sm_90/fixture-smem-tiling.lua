-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 1,
    level = "low",
    supporting = 3,
  },
  effect = {
    resources = {
      occupancy = -0.25,
      registers = 6,
      smem_per_block = 8192,
    },
    speedup = {
      max = 1.9,
      median = 1.45,
      min = 1.1,
      n = 3,
    },
  },
  evidence = {
    {
      candidate = "0000",
      key = "dc917f79aaaaaaaa",
      lineage = "sgemm",
      outcome = "helped",
      run = "fixture-run",
      speedup = 1.448,
      step = "v1_coalesced.cu -> v2_smem_tiles.cu",
    },
    {
      key = "fixture-key-2",
      lineage = "sgemm",
      outcome = "hurt",
      run = "fixture-run",
      speedup = 0.77,
      step = "v4_blocktile_2d.cu -> v5_vectorized.cu",
    },
  },
  example = {
    after = "C[ROW * N + COL] = acc; // \"tiled\"\n",
    before = "C[ROW * N + COL] = acc;\n",
  },
  guards = {
    { "barriers.in_loop_after", ">", 1,
      source = "walk",
      support = {
        helped = 0,
        not_helped = 1,
      },
      why = "FIXTURE: slowed sgemm v5 by 1.3x (invented for the test)",
    },
  },
  id = "fixture-smem-tiling",
  intent = "FIXTURE (hand-written for tests, not learned): stage T x T tiles of both operands in shared memory",
  materialize = {
    transform = "smem_tiling",
  },
  pattern = {
    transform = "smem_tiling",
  },
  preconditions = {
    { "size.N.div8", "==", true,
      evidence = {
        {
          key = "fixture-key-1",
          run = "fixture-run",
        },
      },
      support = {
        helped = 3,
        not_helped = 0,
      },
    },
  },
  schema = 1,
  status = "learned",
}
