-- The L2 norm of each row of a rows x cols matrix (row-major). A held-out
-- task: no lineage under gpu/workloads.
return {
  name = "row_l2norm",
  kernel = "row_l2norm",
  params = { rows = 131072, cols = 512 },   -- a 256 MiB matrix
  test_params = {
    { rows = 50, cols = 300 },   -- one partial block of rows
    { rows = 513, cols = 64 },   -- three blocks, the last one a single row
  },
  buffers = {
    x = { "f32", "rows*cols", init = "uniform" },
    norm = { "f32", "rows", output = true },
  },
  args = { "rows", "cols", "x", "norm" },
  alias = {}, -- never launched in place: restrict and ldg may keep its pointers apart
  reference = "reference.c",
  -- 512 squares below 1, all positive: the sum is near 170 and float
  -- rounding in any order stays a few 1e-6 of it (the square root halves
  -- that), against 1e-5 of max|norm| (about 14); a lost column moves a
  -- norm by 1e-3 relative or more, a missing square root by a factor 13.
  tolerance = { rtol = 1e-5, atol = 1e-6 },
  flops = "2*rows*cols",
  bytes = "4*(rows*cols + rows)",
}
