-- One Jacobi sweep of a 2D 5-point stencil on a rows x cols grid
-- (row-major): every interior point becomes the mean of its four
-- neighbours, the boundary is copied. A held-out task: no lineage under
-- gpu/workloads; kernel.cu is the baseline, reference.c checks it.
return {
  name = "jacobi2d",
  kernel = "jacobi2d",
  params = { rows = 8192, cols = 8192 },   -- 256 MiB in, 256 MiB out
  test_params = {
    { rows = 37, cols = 53 },    -- ragged: partial 16 x 16 blocks on both edges
    { rows = 96, cols = 160 },   -- whole blocks, not square
  },
  buffers = {
    u = { "f32", "rows*cols", init = "uniform" },
    v = { "f32", "rows*cols", output = true },
  },
  args = { "rows", "cols", "u", "v" },
  reference = "reference.c",
  -- Four additions and a scale in float: a few ulps of values below 1, so
  -- 1e-6 of max|v| passes any order of the sum and fails a shifted tap
  -- (an error of the order of the values themselves).
  tolerance = { rtol = 1e-6, atol = 1e-7 },
  flops = "5*rows*cols",
  bytes = "8*rows*cols",
}
