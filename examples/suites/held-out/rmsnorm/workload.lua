-- RMS normalization of each row of a rows x cols matrix (row-major), with
-- a per-column weight: y = x / sqrt(mean(x^2) + eps) * weight. A held-out
-- task: no lineage under gpu/workloads.
return {
  name = "rmsnorm",
  kernel = "rmsnorm",
  params = { rows = 8192, cols = 1024, eps = 1e-6 },   -- 32 MiB in, 32 MiB out; 8.6e9 multiply-adds as written
  test_params = {
    { rows = 7, cols = 300 },    -- a partial block of columns in every row
    { rows = 33, cols = 128 },   -- one whole block per row
  },
  buffers = {
    x = { "f32", "rows*cols", init = "uniform" },
    weight = { "f32", "cols", init = "uniform" },
    y = { "f32", "rows*cols", output = true },
  },
  args = { "rows", "cols", "eps", "x", "weight", "y" },
  alias = {}, -- never launched in place: restrict and ldg may keep its pointers apart
  reference = "reference.c",
  -- The root mean square of 1024 uniform values is near 0.58 and |y| stays
  -- under 1.8; the sum of squares in float in any order is good to a few
  -- 1e-7 relative, the square root and the division to an ulp each: 1e-5
  -- of max|y| holds them, while the root of the sum instead of the mean
  -- (a factor 32) or a row one element short (1e-3) misses.
  tolerance = { rtol = 1e-5, atol = 1e-6 },
  flops = "4*rows*cols",
  bytes = "4*(2*rows*cols + cols)",
}
