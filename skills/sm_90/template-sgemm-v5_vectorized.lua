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
      occupancy = 0.125,
      registers = -5e+01,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 1.1927827146192, 1.7445886651934 },
      max = 1.7431369674448,
      median = 1.46912314096755,
      min = 1.1951093144903,
      n = 2,
    },
  },
  evidence = { 1, 2 },
  guards = {},
  id = "template-sgemm-v5_vectorized",
  intent = "the change of sgemm v4_blocktile_2d.cu -> v5_vectorized.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n\nstatic_assert(BK % 4 == 0 && BN % 4 == 0 && TM % 4 == 0 && TN % 4 == 0,\n              \"float4 paths need multiples of 4\");\n/* ... */\n\nstatic_assert((BM * BK / 4) % THREADS == 0 && (BK * BN / 4) % THREADS == 0,\n              \"each thread loads a whole number of float4 per tile\");\n/* ... */\n\n  __shared__ float As[BK][BM];\n/* ... */\n\n    for (int l = 0; l < BM * BK / 4 / THREADS; ++l) {\n      int idx = tid + l * THREADS;  // float4 index inside the BM x BK tile\n      int r = idx / (BK / 4), c = (idx % (BK / 4)) * 4;\n      float4 v = *reinterpret_cast<const float4 *>(&Ablock[r * K + k0 + c]);\n      As[c + 0][r] = v.x;\n      As[c + 1][r] = v.y;\n      As[c + 2][r] = v.z;\n      As[c + 3][r] = v.w;\n    }\n/* ... */\n\n    for (int l = 0; l < BK * BN / 4 / THREADS; ++l) {\n      int idx = tid + l * THREADS;  // float4 index inside the BK x BN tile\n      int r = idx / (BN / 4), c = (idx % (BN / 4)) * 4;\n      *reinterpret_cast<float4 *>(&Bs[r][c]) =\n          *reinterpret_cast<const float4 *>(&Bblock[(k0 + r) * N + c]);\n    }\n/* ... */\n\n      for (int i = 0; i < TM; i += 4)\n        *reinterpret_cast<float4 *>(&a_frag[i]) =\n            *reinterpret_cast<const float4 *>(&As[kk][thread_row * TM + i]);\n/* ... */\n\n      for (int j = 0; j < TN; j += 4)\n        *reinterpret_cast<float4 *>(&b_frag[j]) =\n            *reinterpret_cast<const float4 *>(&Bs[kk][thread_col * TN + j]);\n/* ... */\n\n    for (int j = 0; j < TN; j += 4) {\n      int col = blockIdx.x * BN + thread_col * TN + j;\n      float4 *dst = reinterpret_cast<float4 *>(&C[row * N + col]);\n      float4 c = *dst;\n      c.x = alpha * acc[i][j + 0] + beta * c.x;\n      c.y = alpha * acc[i][j + 1] + beta * c.y;\n      c.z = alpha * acc[i][j + 2] + beta * c.z;\n      c.w = alpha * acc[i][j + 3] + beta * c.w;\n      *dst = c;\n    }",
      before = "\n\nstatic_assert((BM * BK) % THREADS == 0 && (BK * BN) % THREADS == 0,\n              \"each thread loads a whole number of tile elements\");\n/* ... */\n\n/* ... */\n\n  __shared__ float As[BM][BK];\n/* ... */\n\n    for (int l = 0; l < BM * BK / THREADS; ++l) {\n      int idx = tid + l * THREADS;\n      As[idx / BK][idx % BK] = Ablock[(idx / BK) * K + k0 + idx % BK];\n    }\n/* ... */\n\n    for (int l = 0; l < BK * BN / THREADS; ++l) {\n      int idx = tid + l * THREADS;\n      Bs[idx / BN][idx % BN] = Bblock[(k0 + idx / BN) * N + idx % BN];\n    }\n/* ... */\n\n      for (int i = 0; i < TM; ++i) a_frag[i] = As[thread_row * TM + i][kk];\n/* ... */\n\n      for (int j = 0; j < TN; ++j) b_frag[j] = Bs[kk][thread_col * TN + j];\n/* ... */\n\n    for (int j = 0; j < TN; ++j) {\n      int col = blockIdx.x * BN + thread_col * TN + j;\n      C[row * N + col] = alpha * acc[i][j] + beta * C[row * N + col];\n    }",
    },
  },
  observations = {
    file = "template-sgemm-v5_vectorized.observations.jsonl",
    n = 2,
    sha256 = "563ac7e1dc7dddf96b076a35094f1e2150487b6cf9c769254e7a0a9ab83bc25e",
  },
  pattern = {
    source = "\n\nstatic_assert((BM * BK) % THREADS == 0 && (BK * BN) % THREADS == 0,\n              \"each thread loads a whole number of tile elements\");\n/* ... */\n\n/* ... */\n\n  __shared__ float As[BM][BK];\n/* ... */\n\n    for (int l = 0; l < BM * BK / THREADS; ++l) {\n      int idx = tid + l * THREADS;\n      As[idx / BK][idx % BK] = Ablock[(idx / BK) * K + k0 + idx % BK];\n    }\n/* ... */\n\n    for (int l = 0; l < BK * BN / THREADS; ++l) {\n      int idx = tid + l * THREADS;\n      Bs[idx / BN][idx % BN] = Bblock[(k0 + idx / BN) * N + idx % BN];\n    }\n/* ... */\n\n      for (int i = 0; i < TM; ++i) a_frag[i] = As[thread_row * TM + i][kk];\n/* ... */\n\n      for (int j = 0; j < TN; ++j) b_frag[j] = Bs[kk][thread_col * TN + j];\n/* ... */\n\n    for (int j = 0; j < TN; ++j) {\n      int col = blockIdx.x * BN + thread_col * TN + j;\n      C[row * N + col] = alpha * acc[i][j] + beta * C[row * N + col];\n    }",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
