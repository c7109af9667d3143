-- A batch of small matrix-vector products, y[b] = A[b] x[b], A[b] rows x
-- cols row-major, the matrices and vectors each stored one after another.
-- A held-out task: no lineage under gpu/workloads.
return {
  name = "batched_matvec",
  kernel = "batched_matvec",
  params = { batch = 4096, rows = 128, cols = 128 },   -- 256 MiB of matrices
  test_params = {
    { batch = 37, rows = 13, cols = 29 },    -- 481 outputs: a partial last block
    { batch = 10, rows = 64, cols = 100 },   -- 640 outputs, batches cut across blocks
  },
  buffers = {
    A = { "f32", "batch*rows*cols", init = "uniform" },
    x = { "f32", "batch*cols", init = "uniform" },
    y = { "f32", "batch*rows", output = true },
  },
  args = { "batch", "rows", "cols", "A", "x", "y" },
  alias = {}, -- never launched in place: restrict and ldg may keep its pointers apart
  reference = "reference.c",
  -- 128 products below 1 per output: max|y| is near 10 and float rounding in
  -- any order some 1e-6 absolute, a tenth of 1e-5 of it; the first batch's
  -- vector used for every matrix, or a lost product, misses by 0.1 or more.
  tolerance = { rtol = 1e-5, atol = 1e-6 },
  flops = "2*batch*rows*cols",
  bytes = "4*(batch*rows*cols + batch*cols + batch*rows)",
}
