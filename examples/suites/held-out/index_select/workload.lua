-- Select k columns of a rows x cols matrix (row-major) by a list of 64-bit
-- column indices drawn in [0, cols), repeats allowed: out is rows x k. A
-- held-out task: no lineage under gpu/workloads.
return {
  name = "index_select",
  kernel = "index_select",
  params = { rows = 16384, cols = 4096, k = 2048 },   -- a 256 MiB matrix, 128 MiB out
  test_params = {
    { rows = 37, cols = 100, k = 45 },    -- a partial last block, rows cut across blocks
    { rows = 64, cols = 512, k = 512 },   -- as many indices as columns
  },
  buffers = {
    index = { "i64", "k", init = { "int", 0, "cols - 1" } },
    x = { "f32", "rows*cols", init = "uniform" },
    out = { "f32", "rows*k", output = true },
  },
  args = { "rows", "cols", "k", "index", "x", "out" },
  alias = {}, -- never launched in place: restrict and ldg may keep its pointers apart
  reference = "reference.c",
  tolerance = { rtol = 0, atol = 0 },   -- a copy: exact
  flops = "0",
  bytes = "8*k + 4*2*rows*k",
}
