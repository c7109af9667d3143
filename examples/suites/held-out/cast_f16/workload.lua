-- Scale, clamp to [lo, hi] and convert to IEEE half precision (round to
-- nearest even): y[i] = half(clamp(x[i] * scale, lo, hi)). A held-out task:
-- no lineage under gpu/workloads.
return {
  name = "cast_f16",
  kernel = "cast_f16",
  params = { n = 134217728, scale = 3.7, lo = -3.0, hi = 3.0 },   -- 2^27: 512 MiB in, 256 MiB out
  test_params = {
    { n = 1000 },    -- under two blocks of 512, the last one partial
    { n = 70001 },   -- a partial last block
  },
  buffers = {
    x = { "f32", "n", init = "uniform" },
    y = { "f16", "n", output = true },
  },
  args = { "n", "scale", "lo", "hi", "x", "y" },
  alias = {}, -- never launched in place: restrict and ldg may keep its pointers apart
  reference = "reference.c",
  -- Exact: one IEEE float product on both sides (the reference computes it
  -- in float too), an exact clamp, and one correctly rounded conversion to
  -- half; a kernel that rounds in half earlier, truncates, or forgets the
  -- scale or the clamp is off by at least one half ulp somewhere.
  tolerance = { rtol = 0, atol = 0 },
  flops = "3*n",
  bytes = "6*n",
}
