-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 0,
    level = "low",
    lineages = 1,
    supporting = 2,
    why = "helped 2 of 2 labelled observations from 1 lineage; it never failed to help, so no precondition could be learned",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = 0.0,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 1.0248626653866, 1.1198297374847 },
      max = 1.1170661569352,
      median = 1.0722834239913999,
      min = 1.0275006910476,
      n = 2,
    },
  },
  evidence = { 1, 2 },
  guards = {},
  id = "template-sgemm-v6_warptile",
  intent = "the change of sgemm v5_vectorized.cu -> v6_warptile.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n#define WARPS_M 2                      // warps stacked along M\n/* ... */\n\n#define WARPS_N (THREADS / 32 / WARPS_M)\n/* ... */\n\n#define WM (BM / WARPS_M)              // rows of C per warp\n/* ... */\n\n#define WN (BN / WARPS_N)              // columns of C per warp\n/* ... */\n\n#define LANES_M 8                      // lanes stacked along M inside a warp\n/* ... */\n\n#define LANES_N (32 / LANES_M)\n/* ... */\n\n#define WSUB_M (WM * 4 / TM)           // distance between a thread's 4-row groups\n/* ... */\n\n#define WSUB_N (WN * 4 / TN)           // distance between a thread's 4-column groups\n/* ... */\n\n\nstatic_assert(BK % 4 == 0 && TM % 4 == 0 && TN % 4 == 0, \"float4 paths need multiples of 4\");\n/* ... */\n\nstatic_assert(WM == LANES_M * TM && WN == LANES_N * TN, \"warp tile must be covered by its lanes\");\n/* ... */\n\n  int warp = tid / 32, lane = tid % 32;\n  int warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;\n  int lane_m = lane / LANES_N, lane_n = lane % LANES_N;\n  int row0 = warp_m * WM + lane_m * 4;  // first row of the thread's fragments, inside the tile\n  int col0 = warp_n * WN + lane_n * 4;\n/* ... */\n\n        *reinterpret_cast<float4 *>(&a_frag[i]) =\n            *reinterpret_cast<const float4 *>(&As[kk][row0 + (i / 4) * WSUB_M]);\n/* ... */\n\n        *reinterpret_cast<float4 *>(&b_frag[j]) =\n            *reinterpret_cast<const float4 *>(&Bs[kk][col0 + (j / 4) * WSUB_N]);\n/* ... */\n\n    int row = blockIdx.y * BM + row0 + (i / 4) * WSUB_M + i % 4;\n/* ... */\n\n      int col = blockIdx.x * BN + col0 + (j / 4) * WSUB_N;",
      before = "\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n\nstatic_assert(BK % 4 == 0 && BN % 4 == 0 && TM % 4 == 0 && TN % 4 == 0,\n              \"float4 paths need multiples of 4\");\n/* ... */\n\n/* ... */\n\n  int thread_row = tid / (BN / TN);\n  int thread_col = tid % (BN / TN);\n/* ... */\n\n        *reinterpret_cast<float4 *>(&a_frag[i]) =\n            *reinterpret_cast<const float4 *>(&As[kk][thread_row * TM + i]);\n/* ... */\n\n        *reinterpret_cast<float4 *>(&b_frag[j]) =\n            *reinterpret_cast<const float4 *>(&Bs[kk][thread_col * TN + j]);\n/* ... */\n\n    int row = blockIdx.y * BM + thread_row * TM + i;\n/* ... */\n\n      int col = blockIdx.x * BN + thread_col * TN + j;",
    },
  },
  observations = {
    file = "template-sgemm-v6_warptile.observations.jsonl",
    n = 2,
    sha256 = "97b62b19de453c49ada1cc80ebe455dd2ca3cbf8da2983b1b44c1a19d2a5d8e4",
  },
  pattern = {
    source = "\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n\nstatic_assert(BK % 4 == 0 && BN % 4 == 0 && TM % 4 == 0 && TN % 4 == 0,\n              \"float4 paths need multiples of 4\");\n/* ... */\n\n/* ... */\n\n  int thread_row = tid / (BN / TN);\n  int thread_col = tid % (BN / TN);\n/* ... */\n\n        *reinterpret_cast<float4 *>(&a_frag[i]) =\n            *reinterpret_cast<const float4 *>(&As[kk][thread_row * TM + i]);\n/* ... */\n\n        *reinterpret_cast<float4 *>(&b_frag[j]) =\n            *reinterpret_cast<const float4 *>(&Bs[kk][thread_col * TN + j]);\n/* ... */\n\n    int row = blockIdx.y * BM + thread_row * TM + i;\n/* ... */\n\n      int col = blockIdx.x * BN + thread_col * TN + j;",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
