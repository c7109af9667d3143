-- Dense matrix times vector, y = A x, A row-major M x N. A held-out task:
-- no lineage under gpu/workloads.
return {
  name = "gemv",
  kernel = "gemv",
  params = { M = 8192, N = 8192 },   -- a 256 MiB matrix
  test_params = {
    { M = 100, N = 257 },   -- a partial block, N odd
    { M = 515, N = 64 },    -- tall: five blocks, the last one partial
  },
  buffers = {
    A = { "f32", "M*N", init = "uniform" },
    x = { "f32", "N", init = "uniform" },
    y = { "f32", "M", output = true },
  },
  args = { "M", "N", "A", "x", "y" },
  reference = "reference.c",
  -- 8192 products below 1 per row: max|y| is near 100 and float rounding
  -- in any order some 1e-5 absolute, far under 1e-5 of max|y| (1e-3); a
  -- lost product moves a row by about 0.3.
  tolerance = { rtol = 1e-5, atol = 1e-6 },
  flops = "2*M*N",
  bytes = "4*(M*N + N + M)",
}
