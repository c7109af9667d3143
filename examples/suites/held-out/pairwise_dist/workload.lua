-- All-pairs squared Euclidean distances between N points and M points of
-- dimension D (row-major): an N x M matrix. A held-out task: no lineage
-- under gpu/workloads.
return {
  name = "pairwise_dist",
  kernel = "pairwise_dist",
  params = { N = 4096, M = 4096, D = 64 },   -- 1 MiB per point set, 64 MiB of distances
  test_params = {
    { N = 50, M = 37, D = 16 },   -- partial 16 x 16 blocks on both edges
    { N = 64, M = 96, D = 32 },   -- whole blocks
  },
  buffers = {
    X = { "f32", "N*D", init = "uniform" },
    Y = { "f32", "M*D", init = "uniform" },
    dist = { "f32", "N*M", output = true },
  },
  args = { "N", "M", "D", "X", "Y", "dist" },
  alias = {}, -- never launched in place: restrict and ldg may keep its pointers apart
  reference = "reference.c",
  -- 64 squares below 4: a distance is near 43 and max|dist| under 90, and
  -- float rounding in any order (or through |x|^2 + |y|^2 - 2 x.y) is some
  -- 1e-5 absolute, against 1e-5 of max|dist| (9e-4); absolute differences
  -- instead of squares, or a lost dimension, miss by 0.1 or more.
  tolerance = { rtol = 1e-5, atol = 1e-6 },
  flops = "3*N*M*D",
  bytes = "4*(N*D + M*D + N*M)",
}
