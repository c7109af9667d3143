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
      registers = 18.0,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 0.9811320754717, 1.0285395341536 },
      max = 1.0219973429874,
      median = 1.005287598522165,
      min = 0.98857785405693,
      n = 2,
    },
  },
  evidence = { 1, 2 },
  guards = {
    { "launch.blocks", "<", 34816,
      blocks = false,
      evidence = { 1, 2 },
      source = "probe",
      support = {
        helped = 1,
        not_helped = 1,
      },
      why = "slowed transpose v4_float4.cu -> v5_multi_float4.cu (at bench 2 (cols=2048, rows=2048)) by 0.99x at launch.blocks = 4096: launch.blocks < 34816 (launch.blocks < 34816 after the change, outputs per thread the device holds < 131.879, outputs per thread the device holds < 131.879 after the change alike), while it paid where launch.blocks ≥ 65536 (1.02x); it only ranks: seen in 1 lineage, with no wrong result",
    },
  },
  id = "template-transpose-v5_multi_float4",
  intent = "the change of transpose v4_float4.cu -> v5_multi_float4.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n#define BLOCK_ROWS 8\n/* ... */\n\n\nstatic_assert(TILE % 4 == 0 && TILE % BLOCK_ROWS == 0, \"tile shape must match the block\");\n/* ... */\n\n  float4 v[TILE / BLOCK_ROWS];\n  // All loads first, then all shared stores: the loads overlap in flight.\n#pragma unroll\n  for (int k = 0; k < TILE / BLOCK_ROWS; ++k)\n    if (r + k * BLOCK_ROWS < rows && c < cols)\n      v[k] = *reinterpret_cast<const float4 *>(&in[(r + k * BLOCK_ROWS) * cols + c]);\n#pragma unroll\n  for (int k = 0; k < TILE / BLOCK_ROWS; ++k) {\n    int tr = ty + k * BLOCK_ROWS;\n    if (r + k * BLOCK_ROWS < rows && c < cols) {\n      tile[tr][tx * 4 + 0] = v[k].x;\n      tile[tr][tx * 4 + 1] = v[k].y;\n      tile[tr][tx * 4 + 2] = v[k].z;\n      tile[tr][tx * 4 + 3] = v[k].w;\n    }\n  }\n/* ... */\n\n#pragma unroll\n  for (int k = 0; k < TILE / BLOCK_ROWS; ++k) {\n    int tc = ty + k * BLOCK_ROWS;  // tile column = output row inside the tile\n    if (out_r + k * BLOCK_ROWS < cols && out_c < rows) {\n      float4 o = make_float4(tile[tx * 4 + 0][tc], tile[tx * 4 + 1][tc],\n                             tile[tx * 4 + 2][tc], tile[tx * 4 + 3][tc]);\n      *reinterpret_cast<float4 *>(&out[(out_r + k * BLOCK_ROWS) * rows + out_c]) = o;\n    }\n  }",
      before = "\n/* ... */\n\n\nstatic_assert(TILE % 4 == 0, \"a tile row must hold whole float4\");\n/* ... */\n\n  // cols % 4 == 0, so c < cols means all four columns are inside.\n  if (r < rows && c < cols) {\n    float4 v = *reinterpret_cast<const float4 *>(&in[r * cols + c]);\n    tile[ty][tx * 4 + 0] = v.x;\n    tile[ty][tx * 4 + 1] = v.y;\n    tile[ty][tx * 4 + 2] = v.z;\n    tile[ty][tx * 4 + 3] = v.w;\n  }\n/* ... */\n  // first of 4 input rows\n  if (out_r < cols && out_c < rows) {\n    float4 v = make_float4(tile[tx * 4 + 0][ty], tile[tx * 4 + 1][ty],\n                           tile[tx * 4 + 2][ty], tile[tx * 4 + 3][ty]);\n    *reinterpret_cast<float4 *>(&out[out_r * rows + out_c]) = v;\n  }",
    },
  },
  observations = {
    file = "template-transpose-v5_multi_float4.observations.jsonl",
    n = 2,
    sha256 = "30169e45265242fd8f41f894240f5bfb0436a175b5e3aaf8d40a1005c00961f1",
  },
  pattern = {
    source = "\n/* ... */\n\n\nstatic_assert(TILE % 4 == 0, \"a tile row must hold whole float4\");\n/* ... */\n\n  // cols % 4 == 0, so c < cols means all four columns are inside.\n  if (r < rows && c < cols) {\n    float4 v = *reinterpret_cast<const float4 *>(&in[r * cols + c]);\n    tile[ty][tx * 4 + 0] = v.x;\n    tile[ty][tx * 4 + 1] = v.y;\n    tile[ty][tx * 4 + 2] = v.z;\n    tile[ty][tx * 4 + 3] = v.w;\n  }\n/* ... */\n  // first of 4 input rows\n  if (out_r < cols && out_c < rows) {\n    float4 v = make_float4(tile[tx * 4 + 0][ty], tile[tx * 4 + 1][ty],\n                           tile[tx * 4 + 2][ty], tile[tx * 4 + 3][ty]);\n    *reinterpret_cast<float4 *>(&out[out_r * rows + out_c]) = v;\n  }",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
