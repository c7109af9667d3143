-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 0,
    level = "seen once",
    lineages = 1,
    supporting = 1,
    why = "one observation: nothing to generalize from; it never failed to help, so no precondition could be learned",
  },
  effect = {
    resources = {
      occupancy = 0,
      registers = 10,
      smem_per_block = 12416,
      spill_stores = 0,
    },
    speedup = {
      ci = { 1.0664202094886, 1.0731543519844 },
      max = 1.0703923119971,
      median = 1.0703923119971,
      min = 1.0703923119971,
      n = 1,
    },
  },
  evidence = { 1 },
  guards = {},
  id = "template-transpose-v6_tile64-hunk1",
  intent = "the change of transpose v5_multi_float4.cu, hunk 1 at line 1 reverted -> v6_tile64.cu, as the walk saw it",
  materialize = {
    template = {
      after = "// v6: a larger tile: TILE grows from 32 to 64 (and BLOCK_ROWS from 8 to 16, so each thread still moves TILE / BLOCK_ROWS = 4 float4), halving the tile-edge overhead per byte and quadrupling the bytes each block keeps in flight.\n// out (cols x rows) = transpose of in (rows x cols), both row-major.\n// @kl launch grid(cdiv(cols, TILE), cdiv(rows, TILE)) block(cdiv(TILE, 4), BLOCK_ROWS)\n// @kl requires rows % 4 == 0 && cols % 4 == 0\n#define TILE 64",
      before = "// v5: several float4 per thread: a (TILE / 4) x BLOCK_ROWS block moves the tile in TILE / BLOCK_ROWS row steps, so each thread keeps several independent 16-byte loads in flight.\n// out (cols x rows) = transpose of in (rows x cols), both row-major.\n// @kl launch grid(cdiv(cols, TILE), cdiv(rows, TILE)) block(cdiv(TILE, 4), BLOCK_ROWS)\n// @kl requires rows % 4 == 0 && cols % 4 == 0\n#define TILE 32",
    },
  },
  observations = {
    file = "template-transpose-v6_tile64-hunk1.observations.jsonl",
    n = 1,
    sha256 = "6fe8b8f702fd49a7f045237536e145f873ab7ea9aee6b36edce3105de7a6fa5b",
  },
  pattern = {
    source = "// v5: several float4 per thread: a (TILE / 4) x BLOCK_ROWS block moves the tile in TILE / BLOCK_ROWS row steps, so each thread keeps several independent 16-byte loads in flight.\n// out (cols x rows) = transpose of in (rows x cols), both row-major.\n// @kl launch grid(cdiv(cols, TILE), cdiv(rows, TILE)) block(cdiv(TILE, 4), BLOCK_ROWS)\n// @kl requires rows % 4 == 0 && cols % 4 == 0\n#define TILE 32",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
