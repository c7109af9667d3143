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
      occupancy = 0.0,
      registers = 8,
      smem_per_block = 0,
      spill_stores = 0,
    },
    speedup = {
      max = 1.7605890980932,
      median = 1.0000161299022,
      min = 0.98735623100741,
      n = 3,
    },
  },
  evidence = { 1, 2, 3 },
  guards = {
    { "role.outputs_per_thread_slot", ">=", 139.63636363636363,
      evidence = { 1, 3 },
      source = "walk",
      support = {
        helped = 1,
        not_helped = 1,
      },
      why = "slowed softmax v6_persistent.cu -> v7_row_groups.cu by 0.99x at outputs per thread the device holds = 248.242: outputs per thread the device holds ≥ 139.636 (outputs per thread the device holds ≥ 139.636 after the change, elements reduced into one output ≥ 20480 after the change alike), while it paid where outputs per thread the device holds ≤ 31.03 (1.76x)",
    },
  },
  id = "template-softmax-v7_row_groups",
  intent = "the change of softmax v6_persistent.cu -> v7_row_groups.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\nstatic_assert(BLOCK % 32 == 0 && (WARPS & (WARPS - 1)) == 0, \"a power-of-two number of whole warps\");\n/* ... */\n\n\n// Reductions over the `width` warps starting at warp `first` (width divides\n// WARPS, groups are aligned); every thread gets its group's result, the\n// slots are added in a fixed order, and the trailing barrier frees `buf`.\n// Every thread of the block must call them.\n__device__ float group_max(float v, float *buf, int first, int width) {\n  v = warp_max(v);\n  if (threadIdx.x % 32 == 0) buf[threadIdx.x / 32] = v;\n  __syncthreads();\n  float r = buf[first];\n  for (int w = 1; w < width; ++w) r = fmaxf(r, buf[first + w]);\n  __syncthreads();\n  return r;\n}\n\n__device__ float group_sum(float v, float *buf, int first, int width) {\n  v = warp_sum(v);\n  if (threadIdx.x % 32 == 0) buf[threadIdx.x / 32] = v;\n  __syncthreads();\n  float r = buf[first];\n  for (int w = 1; w < width; ++w) r += buf[first + w];\n  __syncthreads();\n  return r;\n}\n/* ... */\n\n\n// One row held in registers by a team of `team` threads (this thread is\n// number g): a single read, a single write. width == 0 means the team is\n// one warp and reduces by shuffles alone. A thread with active == false\n// still takes part in the reductions.\n__device__ __forceinline__ void cached_row(const float4 *xr4, float4 *yr4,\n                                          int cols4, int g, int team,\n                                          bool active, float *buf, int first,\n                                          int width\n/* ... */\n\n/* ... */\n\n  int nv = active ? (cols4 - g + team - 1) / team : 0;\n/* ... */\n v[j] = xr4[g + j * team];\n/* ... */\n\n  m = width == 0 ? warp_max(m) : group_max(m, buf, first, width);\n/* ... */\n\n  s = width == 0 ? warp_sum(s) : group_sum(s, buf, first, width);\n/* ... */\n\n      yr4[g + j * team] = make_float4(v[j].x / s, v[j].y / s, v[j].z / s, v[j].w / s);\n/* ... */\n  // cols % 4 == 0 keeps every row start 16-byte aligned\n  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;\n/* ... */\n\n\n  if (cols4 <= 32 * VEC) {\n    // One warp per row; warps walk the rows independently.\n    for (int r = blockIdx.x * WARPS + warp; r < rows; r += gridDim.x * WARPS)\n      cached_row(reinterpret_cast<const float4 *>(x + (long)r * cols),\n                 reinterpret_cast<float4 *>(y + (long)r * cols), cols4, lane,\n                 32, true, buf, 0, 0);\n    return;\n  }\n/* ... */\n\n    // A group of `width` warps per row, WARPS / width rows per block step.\n    int width = 2;\n    while (width * 32 * VEC < cols4) width *= 2;\n    int per_block = WARPS / width;\n    int group = warp / width;\n    int g = threadIdx.x % (width * 32);\n    for (int base = blockIdx.x * per_block; base < rows; base += gridDim.x * per_block) {\n      int r = base + group;\n      bool active = r < rows;\n      long offset = active ? (long)r * cols : 0;\n      cached_row(reinterpret_cast<const float4 *>(x + offset),\n                 reinterpret_cast<float4 *>(y + offset), cols4, g, width * 32,\n                 active, buf, group * width, width);\n    }\n/* ... */\n\n    float row_max = group_max(m, buf, 0, WARPS);\n/* ... */\n\n    float s = group_sum(d * expf(m - row_max), buf, 0, WARPS);",
      before = "\nstatic_assert(BLOCK % 32 == 0, \"whole warps only\");\n/* ... */\n\n\n// Block reductions: warp results go through one shared slot per warp, and\n// every thread adds the slots in the same order (deterministic). The\n// trailing barrier lets the next reduction reuse `buf`.\n__device__ float block_max(float v, float *buf) {\n  v = warp_max(v);\n  if (threadIdx.x % 32 == 0) buf[threadIdx.x / 32] = v;\n  __syncthreads();\n  float r = buf[0];\n  for (int w = 1; w < WARPS; ++w) r = fmaxf(r, buf[w]);\n  __syncthreads();\n  return r;\n}\n\n__device__ float block_sum(float v, float *buf) {\n  v = warp_sum(v);\n  if (threadIdx.x % 32 == 0) buf[threadIdx.x / 32] = v;\n  __syncthreads();\n  float r = buf[0];\n  for (int w = 1; w < WARPS; ++w) r += buf[w];\n  __syncthreads();\n  return r;\n}\n/* ... */\n\n\n// One row held in registers by the block: a single read, a single write.\n__device__ __forceinline__ void cached_row(const float4 *xr4, float4 *yr4,\n                                          int cols4, float *buf\n/* ... */\n\n  int g = threadIdx.x;\n/* ... */\n\n  int nv = (cols4 - g + BLOCK - 1) / BLOCK;\n/* ... */\n v[j] = xr4[g + j * BLOCK];\n/* ... */\n\n  m = block_max(m, buf);\n/* ... */\n\n  s = block_sum(s, buf);\n/* ... */\n\n      yr4[g + j * BLOCK] = make_float4(v[j].x / s, v[j].y / s, v[j].z / s, v[j].w / s);\n/* ... */\n\n/* ... */\n\n/* ... */\n\n    for (int r = blockIdx.x; r < rows; r += gridDim.x)\n      cached_row(reinterpret_cast<const float4 *>(x + (long)r * cols),\n                 reinterpret_cast<float4 *>(y + (long)r * cols), cols4, buf);\n/* ... */\n\n    float row_max = block_max(m, buf);\n/* ... */\n\n    float s = block_sum(d * expf(m - row_max), buf);",
    },
  },
  observations = {
    file = "template-softmax-v7_row_groups.observations.jsonl",
    n = 3,
    sha256 = "9b6cd019103729663292cd4ab81fc94359377aa592452952d1cefd8bd3d87be9",
  },
  pattern = {
    source = "\nstatic_assert(BLOCK % 32 == 0, \"whole warps only\");\n/* ... */\n\n\n// Block reductions: warp results go through one shared slot per warp, and\n// every thread adds the slots in the same order (deterministic). The\n// trailing barrier lets the next reduction reuse `buf`.\n__device__ float block_max(float v, float *buf) {\n  v = warp_max(v);\n  if (threadIdx.x % 32 == 0) buf[threadIdx.x / 32] = v;\n  __syncthreads();\n  float r = buf[0];\n  for (int w = 1; w < WARPS; ++w) r = fmaxf(r, buf[w]);\n  __syncthreads();\n  return r;\n}\n\n__device__ float block_sum(float v, float *buf) {\n  v = warp_sum(v);\n  if (threadIdx.x % 32 == 0) buf[threadIdx.x / 32] = v;\n  __syncthreads();\n  float r = buf[0];\n  for (int w = 1; w < WARPS; ++w) r += buf[w];\n  __syncthreads();\n  return r;\n}\n/* ... */\n\n\n// One row held in registers by the block: a single read, a single write.\n__device__ __forceinline__ void cached_row(const float4 *xr4, float4 *yr4,\n                                          int cols4, float *buf\n/* ... */\n\n  int g = threadIdx.x;\n/* ... */\n\n  int nv = (cols4 - g + BLOCK - 1) / BLOCK;\n/* ... */\n v[j] = xr4[g + j * BLOCK];\n/* ... */\n\n  m = block_max(m, buf);\n/* ... */\n\n  s = block_sum(s, buf);\n/* ... */\n\n      yr4[g + j * BLOCK] = make_float4(v[j].x / s, v[j].y / s, v[j].z / s, v[j].w / s);\n/* ... */\n\n/* ... */\n\n/* ... */\n\n    for (int r = blockIdx.x; r < rows; r += gridDim.x)\n      cached_row(reinterpret_cast<const float4 *>(x + (long)r * cols),\n                 reinterpret_cast<float4 *>(y + (long)r * cols), cols4, buf);\n/* ... */\n\n    float row_max = block_max(m, buf);\n/* ... */\n\n    float s = block_sum(d * expf(m - row_max), buf);",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
