-- Sparse matrix times vector, y = A x, with A (R x C, NNZ nonzeros) in CSR:
-- row_ptr (R + 1 offsets) and col_idx (the column of each nonzero, sorted
-- within its row), vals and x floats. A held-out task: no lineage under
-- gpu/workloads.
--
-- The structure is built on the host from the gate's rng: each of the NNZ
-- nonzeros is dealt to a row drawn at random (row lengths vary, as in a
-- real matrix, empty rows included), then each row draws its columns
-- uniformly and sorts them. col_idx is built from row_ptr (`after`), so
-- the two describe one matrix. A column may repeat within a row; CSR
-- allows it and both sides sum the duplicates.

-- row_ptr: the running sums of the rows' counts, from 0.
local function row_ptr(p, rng)
  local count = {}
  for r = 1, p.R do count[r] = 0 end
  for _ = 1, p.NNZ do
    local r = rng:int(1, p.R)
    count[r] = count[r] + 1
  end
  local offsets, acc = { 0 }, 0
  for r = 1, p.R do
    acc = acc + count[r]
    offsets[r + 1] = acc
  end
  return offsets
end

-- col_idx: for every row, its count of columns in [0, C), sorted.
local function col_idx(p, rng, ctx)
  local offsets = randgen.unpack("i32", ctx.buffers.row_ptr)
  local cols, row = {}, {}
  for r = 1, p.R do
    local first, last = offsets[r], offsets[r + 1]   -- 0-based [first, last)
    for k = 1, last - first do row[k] = rng:int(0, p.C - 1) end
    for k = last - first + 1, #row do row[k] = nil end
    table.sort(row)
    for k = 1, last - first do cols[first + k] = row[k] end
  end
  return cols
end

return {
  name = "spmv_csr",
  kernel = "spmv_csr",
  -- 2^19 rows and columns, 16 nonzeros a row on average: 64 MiB of values
  -- and column indices, gathered from a 2 MiB vector.
  params = { R = 524288, C = 524288, NNZ = 8388608 },
  test_params = {
    { R = 300, C = 257, NNZ = 2000 },      -- a partial last block
    { R = 1000, C = 1500, NNZ = 12000 },   -- wider than tall, some empty rows
  },
  buffers = {
    row_ptr = { "i32", "R + 1", init = row_ptr },
    col_idx = { "i32", "NNZ", init = col_idx, after = { "row_ptr" } },
    vals = { "f32", "NNZ", init = "uniform" },
    x = { "f32", "C", init = "uniform" },
    y = { "f32", "R", output = true },
  },
  args = { "R", "C", "NNZ", "row_ptr", "col_idx", "vals", "x", "y" },
  reference = "reference.c",
  -- A row sums some 16 products below 1 (60 at most in practice): float
  -- rounding stays near 1e-7 of max|y| in any order; a dropped or doubled
  -- nonzero moves its row by about 0.3.
  tolerance = { rtol = 1e-5, atol = 1e-6 },
  flops = "2*NNZ",
  bytes = "4*(R + 1 + 2*NNZ + C + R)",
}
