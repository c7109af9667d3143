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
      registers = 4.0,
      smem_per_block = 4096.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 1.9061940313131, 2.2797789857652 },
      max = 2.2690324145178,
      median = 2.08821632691,
      min = 1.9074002393022,
      n = 2,
    },
  },
  evidence = { 1, 2 },
  guards = {},
  id = "template-transpose-v1_smem_tile",
  intent = "the change of transpose v0_naive.cu -> v1_smem_tile.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n  __shared__ float tile[TILE][TILE];\n/* ... */\n\n  int tx = threadIdx.x, ty = threadIdx.y;\n/* ... */\n\n  int c = blockIdx.x * TILE + tx;\n/* ... */\n\n  int r = blockIdx.y * TILE + ty;\n/* ... */\n tile[ty][tx] = in[r * cols + c];\n/* ... */\n\n  __syncthreads();\n/* ... */\n\n  // Output element (blockIdx.x * TILE + ty, blockIdx.y * TILE + tx): a warp\n  // writes TILE consecutive floats of one output row.\n  int out_r = blockIdx.x * TILE + ty;\n/* ... */\n  // an input column\n  int out_c = blockIdx.y * TILE + tx;\n/* ... */\n  // an input row\n  if (out_r < cols && out_c < rows) out[out_r * rows + out_c] = tile[tx][ty];",
      before = "\n/* ... */\n\n/* ... */\n\n  int c = blockIdx.x * TILE + threadIdx.x;\n/* ... */\n\n  int r = blockIdx.y * TILE + threadIdx.y;\n/* ... */\n out[c * rows + r] = in[r * cols + c];\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n",
    },
  },
  observations = {
    file = "template-transpose-v1_smem_tile.observations.jsonl",
    n = 2,
    sha256 = "92ea6f1d40a21ba29ba8128d5e1bdf2ef3feb70b300684a569d5181a0330769e",
  },
  pattern = {
    source = "\n/* ... */\n\n/* ... */\n\n  int c = blockIdx.x * TILE + threadIdx.x;\n/* ... */\n\n  int r = blockIdx.y * TILE + threadIdx.y;\n/* ... */\n out[c * rows + r] = in[r * cols + c];\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
