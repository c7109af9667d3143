-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 0,
    level = "medium",
    supporting = 3,
    why = "helped 3 of 3 labelled observations; it never failed to help, so no precondition could be learned",
  },
  effect = {
    resources = {
      occupancy = 0,
      registers = 1,
      smem_per_block = 1024,
      spill_stores = 0,
    },
    speedup = {
      max = 27.405043227265,
      median = 19.770526960784,
      min = 15.946416009642,
      n = 3,
    },
  },
  evidence = { 1, 2, 3 },
  guards = {},
  id = "template-softmax-v1_block_per_row",
  intent = "the change of softmax v0_naive.cu -> v1_block_per_row.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n\nstatic_assert((BLOCK & (BLOCK - 1)) == 0, \"the tree needs a power-of-two block\");\n/* ... */\n\n\n// Tree reductions over the block; every thread gets the result. The leading\n// barrier keeps a new reduction from overwriting `buf` while it is still read.\n__device__ float block_max(float v, float *buf) {\n  int tid = threadIdx.x;\n  __syncthreads();\n  buf[tid] = v;\n  __syncthreads();\n  for (int s = BLOCK / 2; s > 0; s >>= 1) {\n    if (tid < s) buf[tid] = fmaxf(buf[tid], buf[tid + s]);\n    __syncthreads();\n  }\n  return buf[0];\n}\n/* ... */\n\n\n__device__ float block_sum(float v, float *buf) {\n  int tid = threadIdx.x;\n  __syncthreads();\n  buf[tid] = v;\n  __syncthreads();\n  for (int s = BLOCK / 2; s > 0; s >>= 1) {\n    if (tid < s) buf[tid] += buf[tid + s];\n    __syncthreads();\n  }\n  return buf[0];\n}\n/* ... */\n\n  __shared__ float buf[BLOCK];\n/* ... */\n\n  const float *xr = x + (long)blockIdx.x * cols;\n/* ... */\n\n  float *yr = y + (long)blockIdx.x * cols;\n/* ... */\n threadIdx.x; c < cols; c += BLOCK\n/* ... */\n\n  m = block_max(m, buf);\n/* ... */\n threadIdx.x; c < cols; c += BLOCK\n/* ... */\n\n  s = block_sum(s, buf);\n/* ... */\n threadIdx.x; c < cols; c += BLOCK\n/* ... */\n\n  (void)rows;",
      before = "\n/* ... */\n\n/* ... */\n\n/* ... */\n\n  int r = blockIdx.x * BLOCK + threadIdx.x;\n  if (r >= rows) return;\n/* ... */\n\n  const float *xr = x + (long)r * cols;\n/* ... */\n\n  float *yr = y + (long)r * cols;\n/* ... */\n 0; c < cols; ++c\n/* ... */\n\n/* ... */\n 0; c < cols; ++c\n/* ... */\n\n/* ... */\n 0; c < cols; ++c\n/* ... */\n",
    },
  },
  observations = {
    file = "template-softmax-v1_block_per_row.observations.jsonl",
    n = 3,
    sha256 = "603a756e4821793f732867f07e2d7c2e15169db0947931bf264e47d250f3a89f",
  },
  pattern = {
    source = "\n/* ... */\n\n/* ... */\n\n/* ... */\n\n  int r = blockIdx.x * BLOCK + threadIdx.x;\n  if (r >= rows) return;\n/* ... */\n\n  const float *xr = x + (long)r * cols;\n/* ... */\n\n  float *yr = y + (long)r * cols;\n/* ... */\n 0; c < cols; ++c\n/* ... */\n\n/* ... */\n 0; c < cols; ++c\n/* ... */\n\n/* ... */\n 0; c < cols; ++c\n/* ... */\n",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
