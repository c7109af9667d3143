-- Column sums of a rows x cols matrix (row-major): s[c] = a[0][c] + ... +
-- a[rows-1][c]. A held-out task: no lineage under gpu/workloads.
return {
  name = "colsum",
  kernel = "colsum",
  params = { rows = 2048, cols = 32768 },   -- a 256 MiB matrix
  test_params = {
    { rows = 300, cols = 77 },     -- one partial block of columns
    { rows = 1000, cols = 256 },   -- a whole block
  },
  buffers = {
    a = { "f32", "rows*cols", init = "uniform" },
    s = { "f32", "cols", output = true },
  },
  args = { "rows", "cols", "a", "s" },
  reference = "reference.c",
  -- 2048 values below 1 per column: max|s| is near 100, and float rounding
  -- in any order (serial, split rows, tree) stays near 1e-4 absolute, a
  -- tenth of 1e-5 of max|s|; a lost row moves a sum by about 0.5.
  tolerance = { rtol = 1e-5, atol = 1e-6 },
  flops = "rows*cols",
  bytes = "4*(rows*cols + cols)",
}
