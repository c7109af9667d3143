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
      occupancy = 0.0,
      registers = -1e+01,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 0.99239543726236, 1.0085229145665 },
      max = 1.0063873373838,
      median = 1.0032234891726,
      min = 1.0000596409614,
      n = 2,
    },
  },
  evidence = { 1, 2 },
  guards = {},
  id = "template-transpose-v4_float4",
  intent = "the change of transpose v3_multi_row.cu -> v4_float4.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n/* ... */\n\n\nstatic_assert(TILE % 4 == 0, \"a tile row must hold whole float4\");\n/* ... */\n\n  int c = blockIdx.x * TILE + tx * 4;\n/* ... */\n\n  // cols % 4 == 0, so c < cols means all four columns are inside.\n  if (r < rows && c < cols) {\n    float4 v = *reinterpret_cast<const float4 *>(&in[r * cols + c]);\n    tile[ty][tx * 4 + 0] = v.x;\n    tile[ty][tx * 4 + 1] = v.y;\n    tile[ty][tx * 4 + 2] = v.z;\n    tile[ty][tx * 4 + 3] = v.w;\n  }\n/* ... */\n      // an input column\n  int out_c = blockIdx.y * TILE + tx * 4;\n/* ... */\n  // first of 4 input rows\n  if (out_r < cols && out_c < rows) {\n    float4 v = make_float4(tile[tx * 4 + 0][ty], tile[tx * 4 + 1][ty],\n                           tile[tx * 4 + 2][ty], tile[tx * 4 + 3][ty]);\n    *reinterpret_cast<float4 *>(&out[out_r * rows + out_c]) = v;\n  }",
      before = "\n#define BLOCK_ROWS 8\n/* ... */\n\n\nstatic_assert(TILE % BLOCK_ROWS == 0, \"the block must step through the tile evenly\");\n/* ... */\n\n  int c = blockIdx.x * TILE + tx;\n/* ... */\n\n#pragma unroll\n  for (int k = 0; k < TILE; k += BLOCK_ROWS)\n    if (r + k < rows && c < cols) tile[ty + k][tx] = in[(r + k) * cols + c];\n/* ... */\n\n  int out_c = blockIdx.y * TILE + tx;\n/* ... */\n\n#pragma unroll\n  for (int k = 0; k < TILE; k += BLOCK_ROWS)\n    if (out_r + k < cols && out_c < rows)\n      out[(out_r + k) * rows + out_c] = tile[tx][ty + k];",
    },
  },
  observations = {
    file = "template-transpose-v4_float4.observations.jsonl",
    n = 2,
    sha256 = "a3d0061dcacee0a3b89bd3b7a47ec8f11fc8bbef331488e61d8280dbd65642cc",
  },
  pattern = {
    source = "\n#define BLOCK_ROWS 8\n/* ... */\n\n\nstatic_assert(TILE % BLOCK_ROWS == 0, \"the block must step through the tile evenly\");\n/* ... */\n\n  int c = blockIdx.x * TILE + tx;\n/* ... */\n\n#pragma unroll\n  for (int k = 0; k < TILE; k += BLOCK_ROWS)\n    if (r + k < rows && c < cols) tile[ty + k][tx] = in[(r + k) * cols + c];\n/* ... */\n\n  int out_c = blockIdx.y * TILE + tx;\n/* ... */\n\n#pragma unroll\n  for (int k = 0; k < TILE; k += BLOCK_ROWS)\n    if (out_r + k < cols && out_c < rows)\n      out[(out_r + k) * rows + out_c] = tile[tx][ty + k];",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
