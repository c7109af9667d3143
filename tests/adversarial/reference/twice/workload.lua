-- A gemv whose v0 computes y = 2 A x: every candidate would be judged
-- against a wrong answer. reference.c computes y = A x; the reference check
-- must give baseline_broken before any candidate is compared with v0.
return {
  name = "gemv_twice",
  kernel = "gemv",
  params = { M = 4096, N = 4096 },
  test_params = { { M = 33, N = 70 }, { M = 130, N = 257 } },
  buffers = {
    A = { "f32", "M*N", init = "uniform" },
    x = { "f32", "N", init = "uniform" },
    y = { "f32", "M", output = true },
  },
  args = { "M", "N", "A", "x", "y" },
  tolerance = { rtol = 1e-5, atol = 1e-6 },
  flops = "2*M*N",
  bytes = "4*(M*N + N + M)",
  reference = "reference.c",
  lineage = { "v0.cu" },
}
