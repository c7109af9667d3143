-- An element-wise chain, y = relu(a * x + b) * s, with scalars a, b and s.
-- A held-out task: no lineage under gpu/workloads.
return {
  name = "elementwise_chain",
  kernel = "elementwise_chain",
  params = { n = 67108864, a = 1.5, b = -0.25, s = 0.5 },   -- 256 MiB in, 256 MiB out
  test_params = {
    { n = 1000 },    -- under four blocks, the last one partial
    { n = 70001 },   -- a partial last block
  },
  buffers = {
    x = { "f32", "n", init = "uniform" },
    y = { "f32", "n", output = true },
  },
  args = { "n", "a", "b", "s", "x", "y" },
  reference = "reference.c",
  -- Two roundings (one, fused) on values below 1.25, scaled by 0.5 exactly:
  -- about 1e-7 absolute against max|y| of 0.625; a dropped relu, a lost
  -- bias or scale misses by 0.1 or more.
  tolerance = { rtol = 1e-6, atol = 1e-7 },
  flops = "4*n",
  bytes = "8*n",
}
