-- Scatter-add of n values into bins floats by an index array drawn in
-- [0, bins): out[index[i]] += src[i]. out starts at zero (init = "zeros":
-- the gate zeroes it before every run, as a user's cudaMemset would), so
-- one launch is the whole task. A held-out task: no lineage under
-- gpu/workloads.
return {
  name = "scatter_add",
  kernel = "scatter_add",
  params = { n = 67108864, bins = 1048576 },   -- 2^26 values (512 MiB with their indices) into 4 MiB
  test_params = {
    { n = 1000, bins = 37 },      -- a partial last block, 27 values a bin
    { n = 70001, bins = 1000 },   -- a partial last block
  },
  buffers = {
    index = { "i32", "n", init = { "int", 0, "bins - 1" } },
    src = { "f32", "n", init = "uniform" },
    out = { "f32", "bins", init = "zeros", output = true },
  },
  args = { "n", "bins", "index", "src", "out" },
  alias = {}, -- never launched in place: restrict and ldg may keep its pointers apart
  reference = "reference.c",
  -- Some 64 values below 1 per bin, added in whatever order the atomics
  -- land: max|out| is near 20 and float rounding a few 1e-6 absolute, under
  -- 1e-5 of it; a value added to the wrong bin, or twice, moves a bin by
  -- the value itself.
  tolerance = { rtol = 1e-5, atol = 1e-6 },
  flops = "n",
  bytes = "4*(2*n + bins)",
}
