-- Inclusive prefix sums along each row of a rows x cols matrix
-- (row-major): y[r][c] = x[r][0] + ... + x[r][c], a cumulative sum over the
-- last axis. A held-out task: no lineage under gpu/workloads.
return {
  name = "scan_rows",
  kernel = "scan_rows",
  params = { rows = 4096, cols = 1024 },   -- 16 MiB in, 16 MiB out; 2.1e9 additions as written
  test_params = {
    { rows = 7, cols = 300 },    -- a partial last block, rows cut across blocks
    { rows = 33, cols = 128 },
  },
  buffers = {
    x = { "f32", "rows*cols", init = "uniform" },
    y = { "f32", "rows*cols", output = true },
  },
  args = { "rows", "cols", "x", "y" },
  reference = "reference.c",
  -- A prefix of up to 1024 values below 1: max|y| is some tens, and float
  -- rounding in any order (serial, tree or blocked) stays near 1e-6 of it;
  -- an exclusive scan, or a prefix one term short, misses by up to 1.
  tolerance = { rtol = 1e-5, atol = 1e-6 },
  flops = "rows*cols",
  bytes = "8*rows*cols",
}
