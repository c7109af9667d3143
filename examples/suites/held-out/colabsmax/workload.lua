-- The maximum absolute value of each column of a rows x cols matrix
-- (row-major). A held-out task: no lineage under gpu/workloads.
return {
  name = "colabsmax",
  kernel = "colabsmax",
  params = { rows = 8192, cols = 8192 },   -- a 256 MiB matrix
  test_params = {
    { rows = 300, cols = 77 },     -- one partial block of columns
    { rows = 1000, cols = 256 },   -- whole blocks
  },
  buffers = {
    x = { "f32", "rows*cols", init = "uniform" },
    amax = { "f32", "cols", output = true },
  },
  args = { "rows", "cols", "x", "amax" },
  alias = {}, -- never launched in place: restrict and ldg may keep its pointers apart
  reference = "reference.c",
  -- A maximum picks one input's magnitude: exact in any order.
  tolerance = { rtol = 0, atol = 0 },
  flops = "rows*cols",
  bytes = "4*(rows*cols + cols)",
}
