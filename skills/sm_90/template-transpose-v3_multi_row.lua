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
      registers = 1e+01,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 2.1917521837864, 2.2175572519084 },
      max = 2.2065036063427,
      median = 2.2062394589648,
      min = 2.2059753115869,
      n = 2,
    },
  },
  evidence = { 1, 2 },
  guards = {},
  id = "template-transpose-v3_multi_row",
  intent = "the change of transpose v2_padded.cu -> v3_multi_row.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n#define BLOCK_ROWS 8\n/* ... */\n\n\nstatic_assert(TILE % BLOCK_ROWS == 0, \"the block must step through the tile evenly\");\n/* ... */\n\n#pragma unroll\n  for (int k = 0; k < TILE; k += BLOCK_ROWS)\n    if (r + k < rows && c < cols) tile[ty + k][tx] = in[(r + k) * cols + c];\n/* ... */\n\n#pragma unroll\n  for (int k = 0; k < TILE; k += BLOCK_ROWS)\n    if (out_r + k < cols && out_c < rows)\n      out[(out_r + k) * rows + out_c] = tile[tx][ty + k];",
      before = "\n/* ... */\n\n/* ... */\n\n  if (r < rows && c < cols) tile[ty][tx] = in[r * cols + c];\n/* ... */\n\n  if (out_r < cols && out_c < rows) out[out_r * rows + out_c] = tile[tx][ty];",
    },
  },
  observations = {
    file = "template-transpose-v3_multi_row.observations.jsonl",
    n = 2,
    sha256 = "5104264f1656dfdf462423003f182d55ccf367e29b6b381183c37bd03a701410",
  },
  pattern = {
    source = "\n/* ... */\n\n/* ... */\n\n  if (r < rows && c < cols) tile[ty][tx] = in[r * cols + c];\n/* ... */\n\n  if (out_r < cols && out_c < rows) out[out_r * rows + out_c] = tile[tx][ty];",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
