-- The cumulative maximum along the rows of each column of a rows x cols
-- matrix (row-major): a scan with max. A held-out task: no lineage under
-- gpu/workloads.
return {
  name = "cummax_cols",
  kernel = "cummax_cols",
  params = { rows = 2048, cols = 32768 },   -- 256 MiB in, 256 MiB out
  test_params = {
    { rows = 300, cols = 77 },     -- one partial block of columns
    { rows = 1000, cols = 256 },   -- whole blocks
  },
  buffers = {
    x = { "f32", "rows*cols", init = "uniform" },
    y = { "f32", "rows*cols", output = true },
  },
  args = { "rows", "cols", "x", "y" },
  alias = {}, -- never launched in place: restrict and ldg may keep its pointers apart
  reference = "reference.c",
  -- A maximum picks one input: exact in any order of combination.
  tolerance = { rtol = 0, atol = 0 },
  flops = "rows*cols",
  bytes = "8*rows*cols",
}
