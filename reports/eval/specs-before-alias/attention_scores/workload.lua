-- Attention scores, S = Q K^T / sqrt(D), for BH heads (batch x heads) of
-- L queries and L keys of dimension D, each row-major: Q[h] and K[h] are
-- L x D, S[h] is L x L. A held-out task: no lineage under gpu/workloads.
return {
  name = "attention_scores",
  kernel = "attention_scores",
  params = { BH = 16, L = 1024, D = 64 },   -- 4 MiB per operand in, 64 MiB of scores out
  test_params = {
    { BH = 2, L = 50, D = 16 },   -- partial 16 x 16 blocks on both edges
    { BH = 3, L = 64, D = 32 },   -- whole blocks
  },
  buffers = {
    Q = { "f32", "BH*L*D", init = "uniform" },
    K = { "f32", "BH*L*D", init = "uniform" },
    S = { "f32", "BH*L*L", output = true },
  },
  args = { "BH", "L", "D", "Q", "K", "S" },
  reference = "reference.c",
  -- D = 64 products below 1, then a scale: float rounding in any order is
  -- a few ulps of max|S|; a wrong scale (1 / D) or a lost term misses by
  -- far more than 1e-5 of it.
  tolerance = { rtol = 1e-5, atol = 1e-6 },
  flops = "2*BH*L*L*D",
  bytes = "4*(2*BH*L*D + BH*L*L)",
}
