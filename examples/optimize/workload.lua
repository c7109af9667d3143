-- The workload of examples/optimize/matmul.cu, a kernel with no lineage:
-- what `klineage optimize` needs to judge a candidate (buffers, sizes,
-- tolerance) and nothing it could learn from. The input kernel is the
-- correctness reference; reference.c checks the input itself first.
return {
  name = "matmul",
  kernel = "matmul",
  params = { rows = 2048, cols = 2048, inner = 2048 },   -- the bench size (timed on cuda)
  test_params = {
    { rows = 128, cols = 128, inner = 64 },   -- what emu checks: small, and multiples of the tiles skills use
    { rows = 256, cols = 128, inner = 96 },
  },
  buffers = {
    a = { "f32", "rows*inner", init = "uniform" },
    b = { "f32", "inner*cols", init = "uniform" },
    c = { "f32", "rows*cols", output = true },
  },
  args = { "rows", "cols", "inner", "a", "b", "c" },
  alias = {}, -- never launched in place: restrict and ldg may keep its pointers apart
  reference = "reference.c",
  tolerance = { rtol = 1e-4, atol = 1e-5 },
  flops = "2*rows*cols*inner",
  bytes = "4*(rows*inner + inner*cols + rows*cols)",
}
