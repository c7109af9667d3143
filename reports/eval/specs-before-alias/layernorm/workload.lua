-- Layer normalization of each row of a rows x cols matrix (row-major):
-- y = (x - mean) / sqrt(var + eps) * gamma + beta, mean and the biased
-- variance over the row, gamma and beta per column. A held-out task: no
-- lineage under gpu/workloads.
return {
  name = "layernorm",
  kernel = "layernorm",
  params = { rows = 32768, cols = 1024, eps = 1e-5 },   -- 128 MiB in, 128 MiB out
  test_params = {
    { rows = 37, cols = 300 },   -- a partial block of rows, cols no power of two
    { rows = 130, cols = 64 },   -- two blocks and two rows
  },
  buffers = {
    x = { "f32", "rows*cols", init = "uniform" },
    gamma = { "f32", "cols", init = "uniform" },
    beta = { "f32", "cols", init = "uniform" },
    y = { "f32", "rows*cols", output = true },
  },
  args = { "rows", "cols", "eps", "x", "gamma", "beta", "y" },
  reference = "reference.c",
  -- The normalized values reach about 1.7 and |y| about 2.7. The mean and
  -- variance of 1024 values in float, in any order, are good to a few
  -- 1e-7 relative, and the device's rsqrtf to 2 ulps: 1e-5 of max|y| holds
  -- them, while a wrong mean (one element left out) or a variance with the
  -- unbiased divisor misses by 1e-3 or more.
  tolerance = { rtol = 1e-5, atol = 1e-6 },
  flops = "8*rows*cols",
  bytes = "4*(2*rows*cols + 2*cols)",
}
