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
      registers = 0,
      smem_per_block = 12416,
      spill_stores = 0,
    },
    speedup = {
      ci = { 1.0785116711151, 1.0854429078384 },
      max = 1.0812176485088,
      median = 1.0812176485088,
      min = 1.0812176485088,
      n = 1,
    },
  },
  evidence = { 1 },
  guards = {},
  id = "template-transpose-v6_tile64",
  intent = "the change of transpose v5_multi_float4.cu -> v6_tile64.cu, as the walk saw it",
  materialize = {
    template = {
      after = "// v6: a larger tile: TILE grows from 32 to 64 (and BLOCK_ROWS from 8 to 16, so each thread still moves TILE / BLOCK_ROWS = 4 float4), halving the tile-edge overhead per byte and quadrupling the bytes each block keeps in flight.\n// out (cols x rows) = transpose of in (rows x cols), both row-major.\n// @kl launch grid(cdiv(cols, TILE), cdiv(rows, TILE)) block(cdiv(TILE, 4), BLOCK_ROWS)\n// @kl requires rows % 4 == 0 && cols % 4 == 0\n#define TILE 64\n/* ... */\n\n#define BLOCK_ROWS 16",
      before = "// v5: several float4 per thread: a (TILE / 4) x BLOCK_ROWS block moves the tile in TILE / BLOCK_ROWS row steps, so each thread keeps several independent 16-byte loads in flight.\n// out (cols x rows) = transpose of in (rows x cols), both row-major.\n// @kl launch grid(cdiv(cols, TILE), cdiv(rows, TILE)) block(cdiv(TILE, 4), BLOCK_ROWS)\n// @kl requires rows % 4 == 0 && cols % 4 == 0\n#define TILE 32\n/* ... */\n\n#define BLOCK_ROWS 8",
    },
  },
  observations = {
    file = "template-transpose-v6_tile64.observations.jsonl",
    n = 1,
    sha256 = "7f19029b5f403684e37cffe0b88760c8d76d148bc439a84f0d76d6c760d4f273",
  },
  pattern = {
    source = "// v5: several float4 per thread: a (TILE / 4) x BLOCK_ROWS block moves the tile in TILE / BLOCK_ROWS row steps, so each thread keeps several independent 16-byte loads in flight.\n// out (cols x rows) = transpose of in (rows x cols), both row-major.\n// @kl launch grid(cdiv(cols, TILE), cdiv(rows, TILE)) block(cdiv(TILE, 4), BLOCK_ROWS)\n// @kl requires rows % 4 == 0 && cols % 4 == 0\n#define TILE 32\n/* ... */\n\n#define BLOCK_ROWS 8",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
