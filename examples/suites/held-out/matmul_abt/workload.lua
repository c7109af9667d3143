-- A matrix product with the second operand transposed, C = A B^T: A is
-- M x K, B is N x K and C is M x N, all row-major. A held-out task: no
-- lineage under gpu/workloads.
return {
  name = "matmul_abt",
  kernel = "matmul_abt",
  params = { M = 1024, N = 1024, K = 1024 },   -- 4 MiB per operand; 2.1 GFLOP
  test_params = {
    { M = 37, N = 45, K = 33 },     -- partial 16 x 16 blocks on both edges
    { M = 64, N = 96, K = 128 },    -- whole blocks, not square
  },
  buffers = {
    A = { "f32", "M*K", init = "uniform" },
    B = { "f32", "N*K", init = "uniform" },
    C = { "f32", "M*N", output = true },
  },
  args = { "M", "N", "K", "A", "B", "C" },
  alias = {}, -- never launched in place: restrict and ldg may keep its pointers apart
  reference = "reference.c",
  -- 1024 products below 1 per element: max|C| is some tens and float
  -- rounding in any order (serial, split-K, tiles) a few 1e-5 absolute,
  -- under 1e-5 of max|C|; B read untransposed or a lost product misses by
  -- 0.1 or more.
  tolerance = { rtol = 1e-5, atol = 1e-6 },
  flops = "2*M*N*K",
  bytes = "4*(M*K + N*K + M*N)",
}
