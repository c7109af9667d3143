-- A depthwise 3 x 3 convolution (one filter per channel, stride 1, zero
-- padding 1) of an N x C x H x W tensor; the filters are C x 3 x 3. A
-- held-out task: no lineage under gpu/workloads.
return {
  name = "depthwise_conv2d",
  kernel = "depthwise_conv2d",
  params = { N = 64, C = 128, H = 112, W = 112 },   -- 392 MiB in, 392 MiB out
  test_params = {
    { N = 2, C = 3, H = 15, W = 17 },   -- partial 32 x 8 blocks on both edges
    { N = 1, C = 8, H = 32, W = 64 },   -- whole blocks
  },
  buffers = {
    x = { "f32", "N*C*H*W", init = "uniform" },
    f = { "f32", "C*9", init = "uniform" },
    y = { "f32", "N*C*H*W", output = true },
  },
  args = { "N", "C", "H", "W", "x", "f", "y" },
  alias = {}, -- never launched in place: restrict and ldg may keep its pointers apart
  reference = "reference.c",
  -- Nine products below 1: a few ulps of max|y| (some 3 to 5) in any
  -- order; channel 0's filter for every channel, a shifted tap or a lost
  -- padding check misses by 0.1 or more.
  tolerance = { rtol = 1e-5, atol = 1e-6 },
  flops = "18*N*C*H*W",
  bytes = "4*(2*N*C*H*W + 9*C)",
}
