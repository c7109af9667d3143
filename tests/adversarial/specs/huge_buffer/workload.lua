-- A test size whose buffers take 16 GiB: on emu it took 60 s and 7 GB before a timeout.
return {
  name = "huge_buffer", kernel = "saxpy",
  params = { n = 1000, a = 2.0 },
  test_params = { { n = 1 << 31 }, { n = 333 } },
  buffers = {
    x = { "f32", "n", init = "uniform" },
    y = { "f32", "n", init = "normal", output = true },
  },
  args = { "n", "a", "x", "y" },
  tolerance = { rtol = 1e-6, atol = 1e-7 },
  flops = "2*n", bytes = "12*n",
}
