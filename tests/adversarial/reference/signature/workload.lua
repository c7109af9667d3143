-- A gemv whose reference.c takes A and x in the other order than the
-- spec's args: both are float pointers, so only the names tell; the check
-- must answer bad_input naming the declaration and the args, before
-- anything runs, instead of blaming v0 for the reference's mix-up.
return {
  name = "gemv_signature",
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
