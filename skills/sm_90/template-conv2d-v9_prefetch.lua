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
      spill_stores = 12.0,
    },
    speedup = {
      ci = { 1.0179361663434, 1.054737342232 },
      max = 1.0532876345897,
      median = 1.0365943112184,
      min = 1.0199009878471,
      n = 2,
    },
  },
  evidence = { 1, 2 },
  guards = {},
  id = "template-conv2d-v9_prefetch",
  intent = "the change of conv2d v8_winograd.cu -> v9_prefetch.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n  float wr[WLOADS], dr[16];\n  load_slice(wp, wleft, xp, cleft > 0 ? inside : 0, W, wr, dr);\n  for (int c0 = 0; c0 < C; c0 += BC) {\n    store_slice(Ws, Vs, wr, dr);\n    __syncthreads();\n    transform_filters(Ws, Us);\n    __syncthreads();\n    if (c0 + BC < C) {  // the next slice's loads, in flight during the GEMMs below\n      wp += BC * 9, wleft -= BC * 9, xp += (long)BC * H * W, cleft -= BC;\n      load_slice(wp, wleft, xp, cleft > 0 ? inside : 0, W, wr, dr);\n    }\n    // 16 GEMMs at once: this thread's point xi, 8 channels x 8 tiles.\n#pragma unroll 2\n    for (int c = 0; c < BC; ++c) {\n      float a[8], b[8];\n      const float *ua = Us + xi * USTRIDE + c * BKC + ck;\n      const float *vb = Vs + xi * VSTRIDE + c * BT + ct;\n      *reinterpret_cast<float4 *>(&a[0]) = *reinterpret_cast<const float4 *>(ua);\n      *reinterpret_cast<float4 *>(&a[4]) = *reinterpret_cast<const float4 *>(ua + 4);\n      *reinterpret_cast<float4 *>(&b[0]) = *reinterpret_cast<const float4 *>(vb);\n      *reinterpret_cast<float4 *>(&b[4]) = *reinterpret_cast<const float4 *>(vb + 4);\n#pragma unroll\n      for (int i = 0; i < 8; ++i)\n#pragma unroll\n        for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];\n    }\n    __syncthreads();\n  }",
      before = "\n  for (int c0 = 0; c0 < C; c0 += BC, wp += BC * 9, wleft -= BC * 9, xp += (long)BC * H * W, cleft -= BC) {\n    float wr[WLOADS], dr[16];\n    load_slice(wp, wleft, xp, cleft > 0 ? inside : 0, W, wr, dr);\n    store_slice(Ws, Vs, wr, dr);\n    __syncthreads();\n    transform_filters(Ws, Us);\n    __syncthreads();\n    // 16 GEMMs at once: this thread's point xi, 8 channels x 8 tiles.\n#pragma unroll\n    for (int c = 0; c < BC; ++c) {\n      float a[8], b[8];\n      const float *ua = Us + xi * USTRIDE + c * BKC + ck;\n      const float *vb = Vs + xi * VSTRIDE + c * BT + ct;\n      *reinterpret_cast<float4 *>(&a[0]) = *reinterpret_cast<const float4 *>(ua);\n      *reinterpret_cast<float4 *>(&a[4]) = *reinterpret_cast<const float4 *>(ua + 4);\n      *reinterpret_cast<float4 *>(&b[0]) = *reinterpret_cast<const float4 *>(vb);\n      *reinterpret_cast<float4 *>(&b[4]) = *reinterpret_cast<const float4 *>(vb + 4);\n#pragma unroll\n      for (int i = 0; i < 8; ++i)\n#pragma unroll\n        for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];\n    }\n    __syncthreads();\n  }",
    },
  },
  observations = {
    file = "template-conv2d-v9_prefetch.observations.jsonl",
    n = 2,
    sha256 = "d25309d0bef11e5ccfa1e5bd0a66bf9c8668d62a0b3de07379c313cbd706ecc3",
  },
  pattern = {
    source = "\n  for (int c0 = 0; c0 < C; c0 += BC, wp += BC * 9, wleft -= BC * 9, xp += (long)BC * H * W, cleft -= BC) {\n    float wr[WLOADS], dr[16];\n    load_slice(wp, wleft, xp, cleft > 0 ? inside : 0, W, wr, dr);\n    store_slice(Ws, Vs, wr, dr);\n    __syncthreads();\n    transform_filters(Ws, Us);\n    __syncthreads();\n    // 16 GEMMs at once: this thread's point xi, 8 channels x 8 tiles.\n#pragma unroll\n    for (int c = 0; c < BC; ++c) {\n      float a[8], b[8];\n      const float *ua = Us + xi * USTRIDE + c * BKC + ck;\n      const float *vb = Vs + xi * VSTRIDE + c * BT + ct;\n      *reinterpret_cast<float4 *>(&a[0]) = *reinterpret_cast<const float4 *>(ua);\n      *reinterpret_cast<float4 *>(&a[4]) = *reinterpret_cast<const float4 *>(ua + 4);\n      *reinterpret_cast<float4 *>(&b[0]) = *reinterpret_cast<const float4 *>(vb);\n      *reinterpret_cast<float4 *>(&b[4]) = *reinterpret_cast<const float4 *>(vb + 4);\n#pragma unroll\n      for (int i = 0; i < 8; ++i)\n#pragma unroll\n        for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];\n    }\n    __syncthreads();\n  }",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
