-- saxpy over 64 MiB vectors, for bench/gate.lua: big enough that every
-- sample comes from DRAM after the L2 flush.
return {
  name = "saxpy64",
  kernel = "saxpy",
  params = { n = 16 * 1024 * 1024, a = 2.0 },
  test_params = { { n = 1000 }, { n = 4097, a = -0.5 } },
  buffers = {
    x = { "f32", "n", init = "uniform" },
    y = { "f32", "n", init = "normal", output = true },
  },
  args = { "n", "a", "x", "y" },
  alias = {}, -- never launched in place: restrict and ldg may keep its pointers apart
  tolerance = { rtol = 1e-6, atol = 1e-7 },
  flops = "2*n",
  bytes = "12*n",
  lineage = { "saxpy.cu" },
}
