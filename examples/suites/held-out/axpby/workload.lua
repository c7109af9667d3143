-- z = alpha x + beta y for two vectors of n floats, n passed as a 64-bit
-- integer. A held-out task: no lineage under gpu/workloads.
return {
  name = "axpby",
  kernel = "axpby",
  params = { n = 134217728, alpha = 1.25, beta = -0.75 },   -- 2^27: 1 GiB in, 512 MiB out
  test_params = {
    { n = 1000 },    -- under four blocks, the last one partial
    { n = 70001 },   -- a partial last block
  },
  buffers = {
    x = { "f32", "n", init = "uniform" },
    y = { "f32", "n", init = "uniform" },
    z = { "f32", "n", output = true },
  },
  args = { "n", "alpha", "x", "beta", "y", "z" },
  alias = {}, -- never launched in place: restrict and ldg may keep its pointers apart
  reference = "reference.c",
  -- Two products and a sum of values below 1.25 and 0.75: at most two
  -- roundings (one, fused), some 2.4e-7 absolute against max|z| near 2; a
  -- wrong operand or sign misses by 0.1 or more.
  tolerance = { rtol = 1e-6, atol = 1e-7 },
  flops = "3*n",
  bytes = "12*n",
}
