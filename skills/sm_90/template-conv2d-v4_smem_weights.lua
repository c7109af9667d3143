-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 1,
    level = "low",
    lineages = 1,
    supporting = 1,
    why = "helped 1 of 2 labelled observations from 1 lineage; one success cannot say what made it pay, so no precondition was learned",
  },
  effect = {
    resources = {
      occupancy = -0.5,
      registers = 32.0,
      smem_per_block = 11824.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 0.78291128848426, 1.9327069226832 },
      max = 1.9311804309826,
      median = 1.3581250623482148,
      min = 0.78506969371383,
      n = 2,
    },
  },
  evidence = { 1, 2 },
  guards = {
    { "role.intensity", "<", 149.77187285369718,
      blocks = false,
      evidence = { 1, 2 },
      source = "probe",
      support = {
        helped = 1,
        not_helped = 1,
      },
      why = "slowed conv2d v3_channel_block.cu -> v4_smem_weights.cu (at bench 2 (C=3)) by 0.79x at arithmetic intensity (flops/byte) = 13.187: arithmetic intensity (flops/byte) < 149.772 (arithmetic intensity (flops/byte) < 149.772 after the change, elements reduced into one output < 4716, elements reduced into one output < 93.5 after the change alike), while it paid where arithmetic intensity (flops/byte) ≥ 286.356 (1.93x); it only ranks: seen in 1 lineage, with no wrong result",
    },
  },
  id = "template-conv2d-v4_smem_weights",
  intent = "the change of conv2d v3_channel_block.cu -> v4_smem_weights.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n#define CB 8  // input channels per staged chunk\n/* ... */\n\n#define THREADS (TW * TH)\n/* ... */\n\n  __shared__ float tile[CB][TH + 2][TW + 2];\n/* ... */\n\n  __shared__ float ws[CB][9][KB];\n/* ... */\n\n  for (int c0 = 0; c0 < C; c0 += CB) {\n    for (int e = tid; e < CB * (TH + 2) * (TW + 2); e += THREADS) {\n      int cc = e / ((TH + 2) * (TW + 2)), rest = e % ((TH + 2) * (TW + 2));\n      int ih = oh0 - 1 + rest / (TW + 2), iw = ow0 - 1 + rest % (TW + 2);\n      int c = c0 + cc;\n      tile[cc][rest / (TW + 2)][rest % (TW + 2)] =\n          (c < C && ih >= 0 && ih < H && iw >= 0 && iw < W)\n              ? x[(((long)n * C + c) * H + ih) * W + iw] : 0.0f;\n    }\n    for (int e = tid; e < CB * 9 * KB; e += THREADS) {\n      int j = e / (CB * 9), cc = (e / 9) % CB, t = e % 9;  // consecutive e: consecutive weights of one k\n      int c = c0 + cc;\n      ws[cc][t][j] = c < C ? w[((k0 + j) * C + c) * 9 + t] : 0.0f;\n    }\n    __syncthreads();\n#pragma unroll\n    for (int cc = 0; cc < CB; ++cc) {\n#pragma unroll\n      for (int r = 0; r < 3; ++r)\n#pragma unroll\n        for (int s = 0; s < 3; ++s) {\n          float v = tile[cc][ty + r][tx + s];\n#pragma unroll\n          for (int j = 0; j < KB; ++j) acc[j] += v * ws[cc][r * 3 + s][j];\n        }\n    }\n    __syncthreads();\n  }",
      before = "\n/* ... */\n\n/* ... */\n\n  __shared__ float tile[TH + 2][TW + 2];\n/* ... */\n\n/* ... */\n\n  for (int c = 0; c < C; ++c) {\n    const float *xc = x + ((long)n * C + c) * H * W;\n    for (int e = tid; e < (TH + 2) * (TW + 2); e += TW * TH) {\n      int ih = oh0 - 1 + e / (TW + 2), iw = ow0 - 1 + e % (TW + 2);\n      tile[e / (TW + 2)][e % (TW + 2)] =\n          (ih >= 0 && ih < H && iw >= 0 && iw < W) ? xc[ih * W + iw] : 0.0f;\n    }\n    __syncthreads();\n    float v[9];\n#pragma unroll\n    for (int r = 0; r < 3; ++r)\n#pragma unroll\n      for (int s = 0; s < 3; ++s) v[r * 3 + s] = tile[ty + r][tx + s];\n    // Weights are the same for the whole block: broadcast loads through L1.\n#pragma unroll\n    for (int j = 0; j < KB; ++j) {\n      const float *wk = w + ((k0 + j) * C + c) * 9;\n#pragma unroll\n      for (int t = 0; t < 9; ++t) acc[j] += v[t] * wk[t];\n    }\n    __syncthreads();\n  }",
    },
  },
  observations = {
    file = "template-conv2d-v4_smem_weights.observations.jsonl",
    n = 2,
    sha256 = "52ecf409a7c2e743d9d91c4f043fc8fa281f0f16795b6844b042070c36399643",
  },
  pattern = {
    source = "\n/* ... */\n\n/* ... */\n\n  __shared__ float tile[TH + 2][TW + 2];\n/* ... */\n\n/* ... */\n\n  for (int c = 0; c < C; ++c) {\n    const float *xc = x + ((long)n * C + c) * H * W;\n    for (int e = tid; e < (TH + 2) * (TW + 2); e += TW * TH) {\n      int ih = oh0 - 1 + e / (TW + 2), iw = ow0 - 1 + e % (TW + 2);\n      tile[e / (TW + 2)][e % (TW + 2)] =\n          (ih >= 0 && ih < H && iw >= 0 && iw < W) ? xc[ih * W + iw] : 0.0f;\n    }\n    __syncthreads();\n    float v[9];\n#pragma unroll\n    for (int r = 0; r < 3; ++r)\n#pragma unroll\n      for (int s = 0; s < 3; ++s) v[r * 3 + s] = tile[ty + r][tx + s];\n    // Weights are the same for the whole block: broadcast loads through L1.\n#pragma unroll\n    for (int j = 0; j < KB; ++j) {\n      const float *wk = w + ((k0 + j) * C + c) * 9;\n#pragma unroll\n      for (int t = 0; t < 9; ++t) acc[j] += v[t] * wk[t];\n    }\n    __syncthreads();\n  }",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
