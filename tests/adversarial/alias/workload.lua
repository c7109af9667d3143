-- y = x - x[row's first element], row by row, for a kernel its callers
-- launch in place (y and x one buffer): alias says so, so the gate runs
-- every candidate that way too at the test sizes.
return {
  name = "row_minus_first",
  kernel = "row_minus_first",
  params = { R = 4096, C = 1024 },
  test_params = { { R = 33, C = 70 }, { R = 130, C = 257 } },
  buffers = {
    x = { "f32", "R*C", init = "uniform" },
    y = { "f32", "R*C", output = true },
  },
  args = { "R", "C", "x", "y" },
  alias = { { "y", "x" } },
  tolerance = { rtol = 1e-6, atol = 1e-7 },
  flops = "R*C",
  bytes = "8*R*C",
  reference = "reference.c",
  lineage = { "v0.cu" },
}
