-- An honest kernel whose spec counts far more operations than it needs,
-- as a direct-convolution formula overcounts a Winograd or FFT kernel: the
-- anti-cheat bound must not be built on the flop count. v0 is the saxpy
-- fixture's. Expect: ok on the GPU (suspicious when the flops bound
-- applied: 2e6 * n flops cannot run in microseconds).
return {
  name = "fewer_flops",
  kernel = "saxpy",
  params = { n = 1 << 20, a = 2.0 },
  test_params = { { n = 1000 }, { n = 4097, a = -0.5 } },
  buffers = {
    x = { "f32", "n", init = "uniform" },
    y = { "f32", "n", init = "normal", output = true },
  },
  args = { "n", "a", "x", "y" },
  tolerance = { rtol = 1e-6, atol = 1e-7 },
  flops = "2000000*n",
  bytes = "12*n",
  lineage = { "v0.cu" },
}
