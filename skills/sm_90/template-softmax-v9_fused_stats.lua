-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 0,
    level = "low",
    lineages = 1,
    supporting = 3,
    why = "helped 3 of 3 labelled observations from 1 lineage; it never failed to help, so no precondition could be learned",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = 0,
      smem_per_block = 128,
      spill_stores = 0,
    },
    speedup = {
      ci = { 1.0161034248129, 1.0909090909091 },
      max = 1.0836693548387,
      median = 1.0377478712518,
      min = 1.0224841071631,
      n = 3,
    },
  },
  evidence = { 1, 2, 3 },
  guards = {},
  id = "template-softmax-v9_fused_stats",
  intent = "the change of softmax v8_block_1024.cu -> v9_fused_stats.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n\n// Adds v to a running (max m, sum d of exp(. - m)): one exp per element.\n// Merges two (max, sum) statistics: the sums are rescaled to the larger max.\n// An empty side has (NEG_BIG, 0) and contributes 0 (exp underflows, no NaN).\n__device__ __forceinline__ void merge_stats(float &m, float &s, float m2, float s2) {\n  float mx = fmaxf(m, m2);\n  s = s * expf(m - mx) + s2 * expf(m2 - mx);\n  m = mx;\n}\n/* ... */\n\n\n__device__ __forceinline__ void warp_stats(float &m, float &s) {\n#pragma unroll\n  for (int offset = 16; offset > 0; offset >>= 1)\n    merge_stats(m, s, __shfl_xor_sync(0xffffffffu, m, offset),\n                __shfl_xor_sync(0xffffffffu, s, offset));\n}\n/* ... */\n\n\n// (max, sum) over the `width` warps starting at warp `first`: each warp\n// merges its group's slots with a butterfly over its first `width` lanes\n// (log2(width) levels, not a serial chain of width - 1 merges), then lane\n// 0's result is broadcast. Trailing barrier frees `buf` (2 * WARPS floats).\n__device__ void group_stats(float &m, float &s, float *buf, int first, int width) {\n  warp_stats(m, s);\n  int lane = threadIdx.x % 32;\n  if (lane == 0) {\n    buf[threadIdx.x / 32] = m;\n    buf[WARPS + threadIdx.x / 32] = s;\n  }\n  __syncthreads();\n  m = lane < width ? buf[first + lane] : NEG_BIG;\n  s = lane < width ? buf[WARPS + first + lane] : 0.0f;\n  for (int offset = width / 2; offset > 0; offset >>= 1)\n    merge_stats(m, s, __shfl_xor_sync(0xffffffffu, m, offset),\n                __shfl_xor_sync(0xffffffffu, s, offset));\n  m = __shfl_sync(0xffffffffu, m, 0);\n  s = __shfl_sync(0xffffffffu, s, 0);\n  __syncthreads();\n}\n/* ... */\n\n/* ... */\n\n  float row_max = m, row_sum = s;\n  if (width == 0)\n    warp_stats(row_max, row_sum);\n  else\n    group_stats(row_max, row_sum, buf, first, width);\n  float scale = expf(m - row_max) / row_sum;\n/* ... */\n\n      yr4[g + j * team] = make_float4(v[j].x * scale, v[j].y * scale, v[j].z * scale, v[j].w * scale);\n/* ... */\n\n  __shared__ float buf[2 * WARPS];",
      before = "\n/* ... */\n\n/* ... */\n\n/* ... */\n\n  m = width == 0 ? warp_max(m) : group_max(m, buf, first, width);\n/* ... */\n\n  s = width == 0 ? warp_sum(s) : group_sum(s, buf, first, width);\n/* ... */\n\n      yr4[g + j * team] = make_float4(v[j].x / s, v[j].y / s, v[j].z / s, v[j].w / s);\n/* ... */\n\n  __shared__ float buf[WARPS];",
    },
  },
  observations = {
    file = "template-softmax-v9_fused_stats.observations.jsonl",
    n = 3,
    sha256 = "142bc37a4561f01c8c1fbfc52b93474398f2d2c3c664c31115581e95b5edc643",
  },
  pattern = {
    source = "\n/* ... */\n\n/* ... */\n\n/* ... */\n\n  m = width == 0 ? warp_max(m) : group_max(m, buf, first, width);\n/* ... */\n\n  s = width == 0 ? warp_sum(s) : group_sum(s, buf, first, width);\n/* ... */\n\n      yr4[g + j * team] = make_float4(v[j].x / s, v[j].y / s, v[j].z / s, v[j].w / s);\n/* ... */\n\n  __shared__ float buf[WARPS];",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
