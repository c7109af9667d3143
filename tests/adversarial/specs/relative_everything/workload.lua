-- rtol = 1: |out - ref| <= max|ref| holds for an output of zeros.
return {
  name = "relative_everything", kernel = "saxpy",
  params = { n = 1000, a = 2.0 },
  test_params = { { n = 100 }, { n = 333 } },
  buffers = {
    x = { "f32", "n", init = "uniform" },
    y = { "f32", "n", init = "normal", output = true },
  },
  args = { "n", "a", "x", "y" },
  tolerance = { rtol = 1, atol = 0 },
  flops = "2*n", bytes = "12*n",
}
