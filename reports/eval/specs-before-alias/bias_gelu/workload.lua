-- Bias add then GELU (the exact, erf form) over a rows x cols activation
-- (row-major): y[r][c] = gelu(x[r][c] + bias[c]), gelu(v) = v / 2 *
-- (1 + erf(v / sqrt(2))). A held-out task: no lineage under gpu/workloads.
return {
  name = "bias_gelu",
  kernel = "bias_gelu",
  params = { rows = 16384, cols = 4096 },   -- 256 MiB in, 256 MiB out
  test_params = {
    { rows = 7, cols = 333 },    -- a partial last block, rows cut across blocks
    { rows = 64, cols = 512 },
  },
  buffers = {
    x = { "f32", "rows*cols", init = "uniform" },
    bias = { "f32", "cols", init = "uniform" },
    y = { "f32", "rows*cols", output = true },
  },
  args = { "rows", "cols", "x", "bias", "y" },
  reference = "reference.c",
  -- |y| stays under 2; erff is good to 2 ulps on the device and in libm,
  -- so a few 1e-7 absolute; the tanh approximation of GELU misses by up to
  -- 5e-4 and a lost bias by far more, both over 1e-5 of max|y|.
  tolerance = { rtol = 1e-5, atol = 1e-6 },
  flops = "8*rows*cols",
  bytes = "4*(2*rows*cols + cols)",
}
