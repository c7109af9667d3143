-- 2 x 2 max pooling with stride 2 over an NCHW tensor (N x C x H x W),
-- ceil mode: the output is N x C x cdiv(H, 2) x cdiv(W, 2), and a window
-- past the bottom or right edge takes the maximum of the elements it
-- covers. A held-out task: no lineage under gpu/workloads.
return {
  name = "maxpool2d",
  kernel = "maxpool2d",
  params = { N = 64, C = 64, H = 112, W = 112 },   -- 196 MiB in, 49 MiB out
  test_params = {
    { N = 2, C = 3, H = 15, W = 17 },   -- odd H and W: clipped windows, a partial block
    { N = 1, C = 8, H = 32, W = 48 },   -- even: every window whole
  },
  buffers = {
    x = { "f32", "N*C*H*W", init = "uniform" },
    y = { "f32", "N*C*cdiv(H, 2)*cdiv(W, 2)", output = true },
  },
  args = { "N", "C", "H", "W", "x", "y" },
  reference = "reference.c",
  tolerance = { rtol = 0, atol = 0 },   -- a maximum picks one input: exact
  flops = "N*C*H*W",
  bytes = "4*(N*C*H*W + N*C*cdiv(H, 2)*cdiv(W, 2))",
}
