-- A gemv whose reference.c writes 8 elements past the end of y: the
-- writes meet the emu buffer's guard page and the worker dies with
-- SIGSEGV. The check must give a clear verdict (bad_input, cause fault),
-- and the next evaluation must get a fresh worker.
return {
  name = "gemv_crash",
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
