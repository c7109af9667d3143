-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 1,
    level = "seen once",
    supporting = 0,
    why = "one observation: nothing to generalize from; it never helped, so no precondition could be learned",
  },
  effect = {
    resources = {
      occupancy = 0,
      registers = 0,
      smem_per_block = -992,
      spill_stores = 0,
    },
    speedup = {
      max = 0.99875549078285,
      median = 0.99875549078285,
      min = 0.99875549078285,
      n = 1,
    },
  },
  evidence = { 1 },
  guards = {},
  id = "template-reduction-v8_warp_shuffle",
  intent = "the change of reduction v7_float4.cu -> v8_warp_shuffle.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n\nstatic_assert((BLOCK & (BLOCK - 1)) == 0 && BLOCK >= 32, \"the tree needs a power-of-two block\");\n/* ... */\n\n\n// Tree sum across the 32 lanes of a warp; lane 0 ends with the total.\n__device__ __forceinline__ float warp_sum(float v) {\n#pragma unroll\n  for (int offset = 16; offset > 0; offset >>= 1)\n    v += __shfl_down_sync(0xffffffffu, v, offset);\n  return v;\n}\n/* ... */\n\n  __shared__ float warp_sums[BLOCK / 32];\n/* ... */\n\n  // Warp sums by shuffles, one shared slot per warp, then warp 0 adds those.\n  v = warp_sum(v);\n  if (tid % 32 == 0) warp_sums[tid / 32] = v;\n/* ... */\n\n  if (tid < 32) {\n    v = tid < BLOCK / 32 ? warp_sums[tid] : 0.0f;\n    v = warp_sum(v);\n    if (tid == 0) partial[blockIdx.x] = v;\n  }",
      before = "\n\nstatic_assert(BLOCK >= 64 && (BLOCK & (BLOCK - 1)) == 0, \"the tree needs a power-of-two block of at least 64\");\n/* ... */\n\n\n// The last six steps run inside warp 0 only, without __syncthreads. The\n// historical form read and wrote a volatile array with no barrier at all,\n// trusting the 32 threads of a warp to run in lockstep; since Volta they are\n// scheduled independently, so that form races. __syncwarp after each read\n// (before anyone writes) and after each write (before the next read) restores\n// the ordering the old code assumed.\n__device__ __forceinline__ void warp_reduce(float *sdata, int tid) {\n  float v = sdata[tid];\n#pragma unroll\n  for (int offset = 32; offset > 0; offset >>= 1) {\n    v += sdata[tid + offset];\n    __syncwarp();\n    sdata[tid] = v;\n    __syncwarp();\n  }\n}\n/* ... */\n\n  __shared__ float sdata[BLOCK];\n/* ... */\n\n  sdata[tid] = v;\n/* ... */\n\n#pragma unroll\n  for (int s = BLOCK / 2; s > 32; s >>= 1) {\n    if (tid < s) sdata[tid] += sdata[tid + s];\n    __syncthreads();\n  }\n  if (tid < 32) warp_reduce(sdata, tid);\n  if (tid == 0) partial[blockIdx.x] = sdata[0];",
    },
  },
  observations = {
    file = "template-reduction-v8_warp_shuffle.observations.jsonl",
    n = 1,
    sha256 = "2db0635ef769f0d61f0e0407133ecd252c351391a03f99a4d9c2530f76058da5",
  },
  pattern = {
    source = "\n\nstatic_assert(BLOCK >= 64 && (BLOCK & (BLOCK - 1)) == 0, \"the tree needs a power-of-two block of at least 64\");\n/* ... */\n\n\n// The last six steps run inside warp 0 only, without __syncthreads. The\n// historical form read and wrote a volatile array with no barrier at all,\n// trusting the 32 threads of a warp to run in lockstep; since Volta they are\n// scheduled independently, so that form races. __syncwarp after each read\n// (before anyone writes) and after each write (before the next read) restores\n// the ordering the old code assumed.\n__device__ __forceinline__ void warp_reduce(float *sdata, int tid) {\n  float v = sdata[tid];\n#pragma unroll\n  for (int offset = 32; offset > 0; offset >>= 1) {\n    v += sdata[tid + offset];\n    __syncwarp();\n    sdata[tid] = v;\n    __syncwarp();\n  }\n}\n/* ... */\n\n  __shared__ float sdata[BLOCK];\n/* ... */\n\n  sdata[tid] = v;\n/* ... */\n\n#pragma unroll\n  for (int s = BLOCK / 2; s > 32; s >>= 1) {\n    if (tid < s) sdata[tid] += sdata[tid + s];\n    __syncthreads();\n  }\n  if (tid < 32) warp_reduce(sdata, tid);\n  if (tid == 0) partial[blockIdx.x] = sdata[0];",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
