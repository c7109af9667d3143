-- Batch normalization at inference (the running mean and variance of each
-- channel, then scale and shift) over an N x C x H x W tensor. A held-out
-- task: no lineage under gpu/workloads.
return {
  name = "batchnorm_infer",
  kernel = "batchnorm_infer",
  params = { N = 128, C = 256, H = 56, W = 56, eps = 1e-5 },   -- 392 MiB in, 392 MiB out
  test_params = {
    { N = 2, C = 3, H = 15, W = 17 },   -- 1530 elements: a partial last block
    { N = 4, C = 16, H = 8, W = 8 },    -- whole blocks, a channel per 64 elements
  },
  buffers = {
    x = { "f32", "N*C*H*W", init = "uniform" },
    mean = { "f32", "C", init = "uniform" },
    -- a running variance is positive: drawn in [0.25, 1.25)
    var = { "f32", "C", init = function(p, rng)
      local v = {}
      for c = 1, p.C do v[c] = 0.75 + 0.5 * rng:uniform() end
      return v
    end },
    gamma = { "f32", "C", init = "uniform" },
    beta = { "f32", "C", init = "uniform" },
    y = { "f32", "N*C*H*W", output = true },
  },
  args = { "N", "C", "H", "W", "eps", "x", "mean", "var", "gamma", "beta", "y" },
  alias = {}, -- never launched in place: restrict and ldg may keep its pointers apart
  reference = "reference.c",
  -- |x - mean| < 2 and 1 / sqrt(var + eps) <= 2, so |y| < 5: a subtraction,
  -- a correctly rounded square root (or an rsqrtf of 2 ulps), a division or
  -- product and a multiply-add are a few ulps of it; 1e-5 of max|y| holds
  -- them, and another channel's statistics miss by 0.1 or more.
  tolerance = { rtol = 1e-5, atol = 1e-6 },
  flops = "5*N*C*H*W",
  bytes = "4*(2*N*C*H*W + 4*C)",
}
