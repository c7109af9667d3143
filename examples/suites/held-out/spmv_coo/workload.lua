-- Sparse matrix times vector, y = A x, with A (R x C) as nnz COO triplets
-- in no particular order (rows and columns drawn at random, repeats
-- allowed and summed). y starts at zero (init = "zeros": the gate zeroes
-- it before every run, as a user's cudaMemset would). A held-out task: no
-- lineage under gpu/workloads.
return {
  name = "spmv_coo",
  kernel = "spmv_coo",
  -- 2^20 rows and columns, 16 nonzeros a row on average: 192 MiB of
  -- triplets, gathers from a 4 MiB vector
  params = { R = 1048576, C = 1048576, nnz = 16777216 },
  test_params = {
    { R = 257, C = 300, nnz = 2000 },      -- a partial last block
    { R = 1000, C = 1500, nnz = 12000 },   -- some empty rows
  },
  buffers = {
    row = { "i32", "nnz", init = { "int", 0, "R - 1" } },
    col = { "i32", "nnz", init = { "int", 0, "C - 1" } },
    val = { "f32", "nnz", init = "uniform" },
    x = { "f32", "C", init = "uniform" },
    y = { "f32", "R", init = "zeros", output = true },
  },
  args = { "R", "C", "nnz", "row", "col", "val", "x", "y" },
  alias = {}, -- never launched in place: restrict and ldg may keep its pointers apart
  reference = "reference.c",
  -- A row sums some 16 products below 1 in whatever order the atomics land:
  -- float rounding stays near 1e-7 of max|y|; x gathered by row instead of
  -- column, or a product dropped, moves a row by 0.1 or more.
  tolerance = { rtol = 1e-5, atol = 1e-6 },
  flops = "2*nnz",
  bytes = "4*(3*nnz + C + R)",
}
