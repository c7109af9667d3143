-- A batch of small matrix products, C[b] = A[b] B[b], each row-major:
-- A[b] is M x K, B[b] is K x N, the batch stored one matrix after the
-- other. A held-out task: no lineage under gpu/workloads.
return {
  name = "batched_gemm",
  kernel = "batched_gemm",
  params = { batch = 65536, M = 16, N = 16, K = 16 },   -- 64 MiB per operand
  test_params = {
    { batch = 37 },                          -- 9472 outputs: a partial last block
    { batch = 10, M = 13, N = 7, K = 19 },   -- odd shapes
  },
  buffers = {
    A = { "f32", "batch*M*K", init = "uniform" },
    B = { "f32", "batch*K*N", init = "uniform" },
    C = { "f32", "batch*M*N", output = true },
  },
  args = { "batch", "M", "N", "K", "A", "B", "C" },
  reference = "reference.c",
  -- 16 products per element: float rounding is a few ulps of max|C| in
  -- any order; a lost product or a wrong matrix offset misses by 0.1 or more.
  tolerance = { rtol = 1e-5, atol = 1e-6 },
  flops = "2*batch*M*N*K",
  bytes = "4*batch*(M*K + K*N + M*N)",
}
