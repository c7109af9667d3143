-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 2,
    level = "low",
    supporting = 1,
    why = "helped 1 of 3 labelled observations; one success cannot say what made it pay, so no precondition was learned",
  },
  effect = {
    resources = {
      occupancy = -0.5,
      registers = 28,
      smem_per_block = 0,
      spill_stores = 0,
    },
    speedup = {
      max = 1.4470862415989,
      median = 0.79689171390709,
      min = 0.7583597715736,
      n = 3,
    },
  },
  evidence = { 1, 2, 3 },
  guards = {
    { "role.outputs_per_thread_slot", "<", 139.63636363636363,
      evidence = { 2, 3 },
      source = "probe",
      support = {
        helped = 1,
        not_helped = 1,
      },
      why = "slowed softmax v4_float4.cu -> v5_register_cache.cu (at bench 2 (cols=1024)) by 0.76x at outputs per thread the device holds = 31.03: outputs per thread the device holds < 139.636 (outputs per thread the device holds < 139.636 after the change, elements reduced into one output < 1152, elements reduced into one output < 1152 after the change alike), while it paid where outputs per thread the device holds ≥ 248.242 (1.45x)",
    },
    { "role.outputs_per_thread_slot", ">=", 620.6060606060606,
      evidence = { 1, 3 },
      source = "probe",
      support = {
        helped = 1,
        not_helped = 1,
      },
      why = "slowed softmax v4_float4.cu -> v5_register_cache.cu (at bench 3 (cols=32768)) by 0.80x at outputs per thread the device holds = 992.97: outputs per thread the device holds ≥ 620.606 (outputs per thread the device holds ≥ 620.606 after the change, elements reduced into one output ≥ 5120, elements reduced into one output ≥ 5120 after the change alike), while it paid where outputs per thread the device holds ≤ 248.242 (1.45x)",
    },
  },
  id = "template-softmax-v5_register_cache",
  intent = "the change of softmax v4_float4.cu -> v5_register_cache.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n#define WARPS (BLOCK / 32)\n/* ... */\n\n#define VEC 8                          // float4 of the row each thread keeps in registers\n/* ... */\n\n#define MIN_BLOCKS 4                   // resident blocks per SM: 1024 threads, so <= 64 registers each\n/* ... */\n\n#define NEG_BIG (-3.402823466e38f)     // -FLT_MAX: the identity of max for finite inputs\n/* ... */\n\n\nstatic_assert(BLOCK * MIN_BLOCKS == 1024, \"the register budget assumes 1024 resident threads per SM\");\n/* ... */\n WARPS\n/* ... */\n WARPS\n/* ... */\n\n\n__device__ __forceinline__ float max4(float4 q) {\n  return fmaxf(fmaxf(q.x, q.y), fmaxf(q.z, q.w));\n}\n/* ... */\n\n\n// One row held in registers by the block: a single read, a single write.\n__device__ __forceinline__ void cached_row(const float4 *xr4, float4 *yr4,\n                                          int cols4, float *buf) {\n  float4 v[VEC];\n  int g = threadIdx.x;\n  int nv = (cols4 - g + BLOCK - 1) / BLOCK;  // how many of v[] this thread owns\n  // All loads first, so VEC independent 16-byte loads are in flight.\n#pragma unroll\n  for (int j = 0; j < VEC; ++j)\n    if (j < nv) v[j] = xr4[g + j * BLOCK];\n  float m = NEG_BIG;\n#pragma unroll\n  for (int j = 0; j < VEC; ++j)\n    if (j < nv) m = fmaxf(m, max4(v[j]));\n  m = block_max(m, buf);\n  float s = 0.0f;\n#pragma unroll\n  for (int j = 0; j < VEC; ++j)\n    if (j < nv) {\n      v[j].x = expf(v[j].x - m);\n      v[j].y = expf(v[j].y - m);\n      v[j].z = expf(v[j].z - m);\n      v[j].w = expf(v[j].w - m);\n      s += (v[j].x + v[j].y) + (v[j].z + v[j].w);\n    }\n  s = block_sum(s, buf);\n#pragma unroll\n  for (int j = 0; j < VEC; ++j)\n    if (j < nv)\n      yr4[g + j * BLOCK] = make_float4(v[j].x / s, v[j].y / s, v[j].z / s, v[j].w / s);\n}\n/* ... */\n\n\nextern \"C\" __global__ void __launch_bounds__(BLOCK, MIN_BLOCKS)\nsoftmax(int rows, int cols, const float *x, float *y) {\n  (void)rows;\n  __shared__ float buf[WARPS];\n  int cols4 = cols >> 2;  // cols % 4 == 0 keeps every row start 16-byte aligned\n  if (cols4 <= BLOCK * VEC) {\n    cached_row(reinterpret_cast<const float4 *>(x + (long)blockIdx.x * cols),\n               reinterpret_cast<float4 *>(y + (long)blockIdx.x * cols), cols4, buf);\n    return;\n  }\n\n  // The row does not fit in the block's registers: read it twice.\n  {\n    int r = blockIdx.x;\n    const float4 *xr4 = reinterpret_cast<const float4 *>(x + (long)r * cols);\n    float4 *yr4 = reinterpret_cast<float4 *>(y + (long)r * cols);\n    float m = NEG_BIG, d = 0.0f;\n    for (int c = threadIdx.x; c < cols4; c += BLOCK) {\n      float4 q = xr4[c];\n      online_add(m, d, q.x);\n      online_add(m, d, q.y);\n      online_add(m, d, q.z);\n      online_add(m, d, q.w);\n    }\n    float row_max = block_max(m, buf);\n    float s = block_sum(d * expf(m - row_max), buf);\n    for (int c = threadIdx.x; c < cols4; c += BLOCK) {\n      float4 q = xr4[c];\n      yr4[c] = make_float4(expf(q.x - row_max) / s, expf(q.y - row_max) / s,\n                           expf(q.z - row_max) / s, expf(q.w - row_max) / s);\n    }\n  }\n}",
      before = "\n/* ... */\n\n/* ... */\n\n/* ... */\n\n#define NEG_BIG (-3.402823466e38f)  // -FLT_MAX: the identity of max for finite inputs\n/* ... */\n\n/* ... */\n BLOCK / 32\n/* ... */\n BLOCK / 32\n/* ... */\n\n/* ... */\n\n/* ... */\n\n\nextern \"C\" __global__ void softmax(int rows, int cols, const float *x,\n                                   float *y) {\n  __shared__ float buf[BLOCK / 32];\n  const float *xr = x + (long)blockIdx.x * cols;\n  float *yr = y + (long)blockIdx.x * cols;\n  // cols % 4 == 0 keeps every row start 16-byte aligned.\n  const float4 *xr4 = reinterpret_cast<const float4 *>(xr);\n  float4 *yr4 = reinterpret_cast<float4 *>(yr);\n  int cols4 = cols >> 2;\n  float m = NEG_BIG, d = 0.0f;\n  for (int c = threadIdx.x; c < cols4; c += BLOCK) {\n    float4 q = xr4[c];\n    online_add(m, d, q.x);\n    online_add(m, d, q.y);\n    online_add(m, d, q.z);\n    online_add(m, d, q.w);\n  }\n  float row_max = block_max(m, buf);\n  float s = block_sum(d * expf(m - row_max), buf);\n  for (int c = threadIdx.x; c < cols4; c += BLOCK) {\n    float4 q = xr4[c];\n    yr4[c] = make_float4(expf(q.x - row_max) / s, expf(q.y - row_max) / s,\n                         expf(q.z - row_max) / s, expf(q.w - row_max) / s);\n  }\n  (void)rows;\n}",
    },
  },
  observations = {
    file = "template-softmax-v5_register_cache.observations.jsonl",
    n = 3,
    sha256 = "be17d9f26eaa8b404da0e0501750bced5fc5d0b40239fe13fc7fa7eb056f5f22",
  },
  pattern = {
    source = "\n/* ... */\n\n/* ... */\n\n/* ... */\n\n#define NEG_BIG (-3.402823466e38f)  // -FLT_MAX: the identity of max for finite inputs\n/* ... */\n\n/* ... */\n BLOCK / 32\n/* ... */\n BLOCK / 32\n/* ... */\n\n/* ... */\n\n/* ... */\n\n\nextern \"C\" __global__ void softmax(int rows, int cols, const float *x,\n                                   float *y) {\n  __shared__ float buf[BLOCK / 32];\n  const float *xr = x + (long)blockIdx.x * cols;\n  float *yr = y + (long)blockIdx.x * cols;\n  // cols % 4 == 0 keeps every row start 16-byte aligned.\n  const float4 *xr4 = reinterpret_cast<const float4 *>(xr);\n  float4 *yr4 = reinterpret_cast<float4 *>(yr);\n  int cols4 = cols >> 2;\n  float m = NEG_BIG, d = 0.0f;\n  for (int c = threadIdx.x; c < cols4; c += BLOCK) {\n    float4 q = xr4[c];\n    online_add(m, d, q.x);\n    online_add(m, d, q.y);\n    online_add(m, d, q.z);\n    online_add(m, d, q.w);\n  }\n  float row_max = block_max(m, buf);\n  float s = block_sum(d * expf(m - row_max), buf);\n  for (int c = threadIdx.x; c < cols4; c += BLOCK) {\n    float4 q = xr4[c];\n    yr4[c] = make_float4(expf(q.x - row_max) / s, expf(q.y - row_max) / s,\n                         expf(q.z - row_max) / s, expf(q.w - row_max) / s);\n  }\n  (void)rows;\n}",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
