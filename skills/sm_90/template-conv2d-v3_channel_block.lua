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
      occupancy = 0.25,
      registers = -3.0,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 2.8255903402248, 3.0730235886301 },
      max = 3.0623344538745,
      median = 2.9455552830663,
      min = 2.8287761122581,
      n = 2,
    },
  },
  evidence = { 1, 2 },
  guards = {},
  id = "template-conv2d-v3_channel_block",
  intent = "the change of conv2d v2_smem_halo.cu -> v3_channel_block.cu, as the walk saw it",
  materialize = {
    template = {
      after = "// v3: register blocking over output channels: each thread computes KB output channels of its pixel, so every staged input value is reused KB times from a register and the grid holds KB times fewer blocks.\n// y[n][k][oh][ow] = sum over c, r, s of x[n][c][oh+r-1][ow+s-1] * w[k][c][r][s]\n// (NCHW, KCRS, 3x3, stride 1, zero padding 1).\n// @kl launch grid(cdiv(W, TW), cdiv(H, TH), N * cdiv(K, KB)) block(TW, TH)\n// @kl requires K % KB == 0\n#define TW 32\n/* ... */\n\n#define KB 8  // output channels per thread\n/* ... */\n\n  int groups = K / KB;\n  int n = blockIdx.z / groups, k0 = (blockIdx.z % groups) * KB;\n/* ... */\n\n  float acc[KB];\n/* ... */\n\n#pragma unroll\n/* ... */\n\n  for (int j = 0; j < KB; ++j) acc[j] = 0.0f;\n/* ... */\n\n    float v[9];\n/* ... */\n v[r * 3 + s] = tile[ty + r][tx + s];\n/* ... */\n\n    // Weights are the same for the whole block: broadcast loads through L1.\n#pragma unroll\n/* ... */\n\n    for (int j = 0; j < KB; ++j) {\n      const float *wk = w + ((k0 + j) * C + c) * 9;\n#pragma unroll\n      for (int t = 0; t < 9; ++t) acc[j] += v[t] * wk[t];\n    }\n/* ... */\n\n  if (oh < H && ow < W) {\n#pragma unroll\n    for (int j = 0; j < KB; ++j) y[(((long)n * K + k0 + j) * H + oh) * W + ow] = acc[j];\n  }",
      before = "// v2: shared-memory input tiles with a halo: a block computes a TH x TW output tile of one output channel and stages each input channel's (TH+2) x (TW+2) window in shared memory once, instead of every thread loading its nine taps from global memory.\n// y[n][k][oh][ow] = sum over c, r, s of x[n][c][oh+r-1][ow+s-1] * w[k][c][r][s]\n// (NCHW, KCRS, 3x3, stride 1, zero padding 1).\n// @kl launch grid(cdiv(W, TW), cdiv(H, TH), N * K) block(TW, TH)\n#define TW 32  // a warp spans one tile row: coalesced loads and stores\n/* ... */\n\n/* ... */\n\n  int n = blockIdx.z / K, k = blockIdx.z % K;\n/* ... */\n\n  float acc = 0.0f;\n/* ... */\n\n/* ... */\n\n/* ... */\n\n    const float *wk = w + (k * C + c) * 9;\n/* ... */\n acc += tile[ty + r][tx + s] * wk[r * 3 + s];\n/* ... */\n\n/* ... */\n\n/* ... */\n\n  if (oh < H && ow < W) y[(((long)n * K + k) * H + oh) * W + ow] = acc;",
    },
  },
  observations = {
    file = "template-conv2d-v3_channel_block.observations.jsonl",
    n = 2,
    sha256 = "069a9789a27b699c7715c61d61ad172c9cdb45acd8bbb5963c02213a81ab53b0",
  },
  pattern = {
    source = "// v2: shared-memory input tiles with a halo: a block computes a TH x TW output tile of one output channel and stages each input channel's (TH+2) x (TW+2) window in shared memory once, instead of every thread loading its nine taps from global memory.\n// y[n][k][oh][ow] = sum over c, r, s of x[n][c][oh+r-1][ow+s-1] * w[k][c][r][s]\n// (NCHW, KCRS, 3x3, stride 1, zero padding 1).\n// @kl launch grid(cdiv(W, TW), cdiv(H, TH), N * K) block(TW, TH)\n#define TW 32  // a warp spans one tile row: coalesced loads and stores\n/* ... */\n\n/* ... */\n\n  int n = blockIdx.z / K, k = blockIdx.z % K;\n/* ... */\n\n  float acc = 0.0f;\n/* ... */\n\n/* ... */\n\n/* ... */\n\n    const float *wk = w + (k * C + c) * 9;\n/* ... */\n acc += tile[ty + r][tx + s] * wk[r * 3 + s];\n/* ... */\n\n/* ... */\n\n/* ... */\n\n  if (oh < H && ow < W) y[(((long)n * K + k) * H + oh) * W + ow] = acc;",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
