-- A 1D convolution (cross-correlation, as in deep learning) of each of
-- `rows` signals of length len with one filter of 2R + 1 taps, zero
-- padded so the output keeps the length: y[r][t] = sum over k in [-R, R]
-- of w[k + R] * x[r][t + k]. A held-out task: no lineage under gpu/workloads.
return {
  name = "conv1d",
  kernel = "conv1d",
  params = { rows = 1024, len = 65536, R = 7 },   -- 15 taps; 256 MiB in, 256 MiB out
  test_params = {
    { rows = 3, len = 1000, R = 7 },   -- signals cut across blocks, a partial last block
    { rows = 5, len = 333, R = 2 },    -- another filter width
  },
  buffers = {
    x = { "f32", "rows*len", init = "uniform" },
    w = { "f32", "2*R + 1", init = "uniform" },
    y = { "f32", "rows*len", output = true },
  },
  args = { "rows", "len", "R", "x", "w", "y" },
  reference = "reference.c",
  -- 15 products below 1: a few ulps of max|y| in any order; a shifted tap
  -- or a lost edge (padding) misses by 0.1 or more.
  tolerance = { rtol = 1e-5, atol = 1e-6 },
  flops = "2*rows*len*(2*R + 1)",
  bytes = "4*(2*rows*len + 2*R + 1)",
}
