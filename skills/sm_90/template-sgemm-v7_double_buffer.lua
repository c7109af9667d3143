-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 0,
    level = "seen once",
    lineages = 1,
    supporting = 1,
    why = "one observation: nothing to generalize from; it never failed to help, so no precondition could be learned",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = 11,
      smem_per_block = 8192,
      spill_stores = 0,
    },
    speedup = {
      ci = { 1.1066266420135, 1.1085702954721 },
      max = 1.1077431811075,
      median = 1.1077431811075,
      min = 1.1077431811075,
      n = 1,
    },
  },
  evidence = { 1 },
  guards = {},
  id = "template-sgemm-v7_double_buffer",
  intent = "the change of sgemm v6_warptile.cu -> v7_double_buffer.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n\n#define A_LOADS (BM * BK / 4 / THREADS)  // float4 per thread per A tile\n/* ... */\n\n#define B_LOADS (BK * BN / 4 / THREADS)\n/* ... */\n\n\n// Writes one tile pair from registers into a shared-memory stage; A goes in transposed.\n__device__ __forceinline__ void store_tiles(float (*As)[BM], float (*Bs)[BN],\n                                            const float4 *a, const float4 *b, int tid) {\n#pragma unroll\n  for (int l = 0; l < A_LOADS; ++l) {\n    int idx = tid + l * THREADS;\n    int r = idx / (BK / 4), c = (idx % (BK / 4)) * 4;\n    As[c + 0][r] = a[l].x;\n    As[c + 1][r] = a[l].y;\n    As[c + 2][r] = a[l].z;\n    As[c + 3][r] = a[l].w;\n  }\n#pragma unroll\n  for (int l = 0; l < B_LOADS; ++l) {\n    int idx = tid + l * THREADS;\n    int r = idx / (BN / 4), c = (idx % (BN / 4)) * 4;\n    *reinterpret_cast<float4 *>(&Bs[r][c]) = b[l];\n  }\n}\n/* ... */\n\n  __shared__ float As[2][BK][BM];\n/* ... */\n  // transposed: As[stage][k][m]\n  __shared__ float Bs[2][BK][BN];\n/* ... */\n\n  float4 a_next[A_LOADS], b_next[B_LOADS];\n/* ... */\n  // the tile in flight\n\n  // Prologue: stage 0 holds the first tile.\n#pragma unroll\n/* ... */\n\n  for (int l = 0; l < A_LOADS; ++l) {\n    int idx = tid + l * THREADS;\n    a_next[l] = *reinterpret_cast<const float4 *>(\n        &Ablock[(idx / (BK / 4)) * K + (idx % (BK / 4)) * 4]);\n  }\n/* ... */\n\n#pragma unroll\n/* ... */\n\n  for (int l = 0; l < B_LOADS; ++l) {\n    int idx = tid + l * THREADS;\n    b_next[l] = *reinterpret_cast<const float4 *>(\n        &Bblock[(idx / (BN / 4)) * N + (idx % (BN / 4)) * 4]);\n  }\n/* ... */\n\n  store_tiles(As[0], Bs[0], a_next, b_next, tid);\n/* ... */\n\n  __syncthreads();\n/* ... */\n\n\n  int stage = 0;\n/* ... */\n\n    bool more = k0 + BK < K;\n    if (more) {\n#pragma unroll\n      for (int l = 0; l < A_LOADS; ++l) {\n        int idx = tid + l * THREADS;\n        a_next[l] = *reinterpret_cast<const float4 *>(\n            &Ablock[(idx / (BK / 4)) * K + k0 + BK + (idx % (BK / 4)) * 4]);\n      }\n#pragma unroll\n      for (int l = 0; l < B_LOADS; ++l) {\n        int idx = tid + l * THREADS;\n        b_next[l] = *reinterpret_cast<const float4 *>(\n            &Bblock[(k0 + BK + idx / (BN / 4)) * N + (idx % (BN / 4)) * 4]);\n      }\n    }\n/* ... */\n\n        *reinterpret_cast<float4 *>(&a_frag[i]) =\n            *reinterpret_cast<const float4 *>(&As[stage][kk][row0 + (i / 4) * WSUB_M]);\n/* ... */\n\n        *reinterpret_cast<float4 *>(&b_frag[j]) =\n            *reinterpret_cast<const float4 *>(&Bs[stage][kk][col0 + (j / 4) * WSUB_N]);\n/* ... */\n\n    if (more) {\n      // The other stage was last read before the previous barrier, so it is free.\n      store_tiles(As[stage ^ 1], Bs[stage ^ 1], a_next, b_next, tid);\n      __syncthreads();\n      stage ^= 1;\n    }",
      before = "\n/* ... */\n\n/* ... */\n\n/* ... */\n\n  __shared__ float As[BK][BM];\n/* ... */\n  // transposed: As[k][m]\n  __shared__ float Bs[BK][BN];\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n#pragma unroll\n    for (int l = 0; l < BM * BK / 4 / THREADS; ++l) {\n      int idx = tid + l * THREADS;\n      int r = idx / (BK / 4), c = (idx % (BK / 4)) * 4;\n      float4 v = *reinterpret_cast<const float4 *>(&Ablock[r * K + k0 + c]);\n      As[c + 0][r] = v.x;\n      As[c + 1][r] = v.y;\n      As[c + 2][r] = v.z;\n      As[c + 3][r] = v.w;\n    }\n#pragma unroll\n    for (int l = 0; l < BK * BN / 4 / THREADS; ++l) {\n      int idx = tid + l * THREADS;\n      int r = idx / (BN / 4), c = (idx % (BN / 4)) * 4;\n      *reinterpret_cast<float4 *>(&Bs[r][c]) =\n          *reinterpret_cast<const float4 *>(&Bblock[(k0 + r) * N + c]);\n    }\n    __syncthreads();\n/* ... */\n\n        *reinterpret_cast<float4 *>(&a_frag[i]) =\n            *reinterpret_cast<const float4 *>(&As[kk][row0 + (i / 4) * WSUB_M]);\n/* ... */\n\n        *reinterpret_cast<float4 *>(&b_frag[j]) =\n            *reinterpret_cast<const float4 *>(&Bs[kk][col0 + (j / 4) * WSUB_N]);\n/* ... */\n\n    __syncthreads();",
    },
  },
  observations = {
    file = "template-sgemm-v7_double_buffer.observations.jsonl",
    n = 1,
    sha256 = "6fbefae5fce9709b6b6f67d7701cb931c891f44c6a47f31be190c35a22537384",
  },
  pattern = {
    source = "\n/* ... */\n\n/* ... */\n\n/* ... */\n\n  __shared__ float As[BK][BM];\n/* ... */\n  // transposed: As[k][m]\n  __shared__ float Bs[BK][BN];\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n#pragma unroll\n    for (int l = 0; l < BM * BK / 4 / THREADS; ++l) {\n      int idx = tid + l * THREADS;\n      int r = idx / (BK / 4), c = (idx % (BK / 4)) * 4;\n      float4 v = *reinterpret_cast<const float4 *>(&Ablock[r * K + k0 + c]);\n      As[c + 0][r] = v.x;\n      As[c + 1][r] = v.y;\n      As[c + 2][r] = v.z;\n      As[c + 3][r] = v.w;\n    }\n#pragma unroll\n    for (int l = 0; l < BK * BN / 4 / THREADS; ++l) {\n      int idx = tid + l * THREADS;\n      int r = idx / (BN / 4), c = (idx % (BN / 4)) * 4;\n      *reinterpret_cast<float4 *>(&Bs[r][c]) =\n          *reinterpret_cast<const float4 *>(&Bblock[(k0 + r) * N + c]);\n    }\n    __syncthreads();\n/* ... */\n\n        *reinterpret_cast<float4 *>(&a_frag[i]) =\n            *reinterpret_cast<const float4 *>(&As[kk][row0 + (i / 4) * WSUB_M]);\n/* ... */\n\n        *reinterpret_cast<float4 *>(&b_frag[j]) =\n            *reinterpret_cast<const float4 *>(&Bs[kk][col0 + (j / 4) * WSUB_N]);\n/* ... */\n\n    __syncthreads();",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
