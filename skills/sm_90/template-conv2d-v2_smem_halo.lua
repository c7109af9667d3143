-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 2,
    level = "low",
    lineages = 1,
    supporting = 0,
    why = "helped 0 of 2 labelled observations from 1 lineage; it never helped, so no precondition could be learned",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = -5.0,
      smem_per_block = 1.36e+03,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 0.52938940550859, 0.83524037109924 },
      max = 0.83474363657529,
      median = 0.6821408851434301,
      min = 0.52953813371157,
      n = 2,
    },
  },
  evidence = { 1, 2 },
  guards = {},
  id = "template-conv2d-v2_smem_halo",
  intent = "the change of conv2d v1_coalesced.cu -> v2_smem_halo.cu, as the walk saw it",
  materialize = {
    template = {
      after = "// v2: shared-memory input tiles with a halo: a block computes a TH x TW output tile of one output channel and stages each input channel's (TH+2) x (TW+2) window in shared memory once, instead of every thread loading its nine taps from global memory.\n// y[n][k][oh][ow] = sum over c, r, s of x[n][c][oh+r-1][ow+s-1] * w[k][c][r][s]\n// (NCHW, KCRS, 3x3, stride 1, zero padding 1).\n// @kl launch grid(cdiv(W, TW), cdiv(H, TH), N * K) block(TW, TH)\n#define TW 32  // a warp spans one tile row: coalesced loads and stores\n#define TH 8\n/* ... */\n\n  __shared__ float tile[TH + 2][TW + 2];\n  int n = blockIdx.z / K, k = blockIdx.z % K;\n  int ow0 = blockIdx.x * TW, oh0 = blockIdx.y * TH;\n  int tx = threadIdx.x, ty = threadIdx.y, tid = ty * TW + tx;\n  int oh = oh0 + ty, ow = ow0 + tx;\n/* ... */\n\n  for (int c = 0; c < C; ++c) {\n    const float *xc = x + ((long)n * C + c) * H * W;\n    // The window starts one row and one column before the tile; outside the\n    // image it holds the zero padding.\n    for (int e = tid; e < (TH + 2) * (TW + 2); e += TW * TH) {\n      int ih = oh0 - 1 + e / (TW + 2), iw = ow0 - 1 + e % (TW + 2);\n      tile[e / (TW + 2)][e % (TW + 2)] =\n          (ih >= 0 && ih < H && iw >= 0 && iw < W) ? xc[ih * W + iw] : 0.0f;\n    }\n    __syncthreads();\n    const float *wk = w + (k * C + c) * 9;\n#pragma unroll\n    for (int r = 0; r < 3; ++r)\n#pragma unroll\n      for (int s = 0; s < 3; ++s) acc += tile[ty + r][tx + s] * wk[r * 3 + s];\n    __syncthreads();  // the next channel overwrites the window\n  }\n  if (oh < H && ow < W) y[(((long)n * K + k) * H + oh) * W + ow] = acc;\n  (void)N;",
      before = "// v1: coalesced output mapping: the output column ow becomes the fastest-varying thread index, so a warp reads neighbouring inputs, writes one contiguous run of outputs and shares each weight as a broadcast.\n// y[n][k][oh][ow] = sum over c, r, s of x[n][c][oh+r-1][ow+s-1] * w[k][c][r][s]\n// (NCHW, KCRS, 3x3, stride 1, zero padding 1).\n// @kl launch grid(cdiv(N * K * H * W, BLOCK)) block(BLOCK)\n#define BLOCK 256\n/* ... */\n\n  long i = (long)blockIdx.x * BLOCK + threadIdx.x;\n  if (i >= (long)N * K * H * W) return;\n  int ow = (int)(i % W);\n  long rest = i / W;\n  int oh = (int)(rest % H);\n  rest /= H;\n  int k = (int)(rest % K);\n  int n = (int)(rest / K);\n/* ... */\n\n  for (int c = 0; c < C; ++c)\n    for (int r = 0; r < 3; ++r)\n      for (int s = 0; s < 3; ++s) {\n        int ih = oh + r - 1, iw = ow + s - 1;\n        if (ih >= 0 && ih < H && iw >= 0 && iw < W)\n          acc += x[(((long)n * C + c) * H + ih) * W + iw] * w[((k * C + c) * 3 + r) * 3 + s];\n      }\n  y[i] = acc;",
    },
  },
  observations = {
    file = "template-conv2d-v2_smem_halo.observations.jsonl",
    n = 2,
    sha256 = "560344bd4d29e7fcfb3f6379a2238742a25eeac60ee8201ab4d2421e8b925ad2",
  },
  pattern = {
    source = "// v1: coalesced output mapping: the output column ow becomes the fastest-varying thread index, so a warp reads neighbouring inputs, writes one contiguous run of outputs and shares each weight as a broadcast.\n// y[n][k][oh][ow] = sum over c, r, s of x[n][c][oh+r-1][ow+s-1] * w[k][c][r][s]\n// (NCHW, KCRS, 3x3, stride 1, zero padding 1).\n// @kl launch grid(cdiv(N * K * H * W, BLOCK)) block(BLOCK)\n#define BLOCK 256\n/* ... */\n\n  long i = (long)blockIdx.x * BLOCK + threadIdx.x;\n  if (i >= (long)N * K * H * W) return;\n  int ow = (int)(i % W);\n  long rest = i / W;\n  int oh = (int)(rest % H);\n  rest /= H;\n  int k = (int)(rest % K);\n  int n = (int)(rest / K);\n/* ... */\n\n  for (int c = 0; c < C; ++c)\n    for (int r = 0; r < 3; ++r)\n      for (int s = 0; s < 3; ++s) {\n        int ih = oh + r - 1, iw = ow + s - 1;\n        if (ih >= 0 && ih < H && iw >= 0 && iw < W)\n          acc += x[(((long)n * C + c) * H + ih) * W + iw] * w[((k * C + c) * 3 + r) * 3 + s];\n      }\n  y[i] = acc;",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
  unexplained = {
    {
      evidence = { 1 },
      why = "slowed conv2d v1_coalesced.cu -> v2_smem_halo.cu (at bench 2 (C=3)) by 0.83x: no helped case to contrast it with",
    },
    {
      evidence = { 2 },
      why = "slowed conv2d v1_coalesced.cu -> v2_smem_halo.cu by 0.53x: no helped case to contrast it with",
    },
  },
}
