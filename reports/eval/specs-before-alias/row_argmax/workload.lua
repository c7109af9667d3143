-- The index of the largest element of each row of a rows x cols matrix
-- (row-major); on a tie, the first such index. A held-out task: no
-- lineage under gpu/workloads. Uniform floats almost never tie at a row's
-- maximum, so the tie rule is stated here and in reference.c but the test
-- inputs hardly exercise it.
return {
  name = "row_argmax",
  kernel = "row_argmax",
  params = { rows = 65536, cols = 1024 },   -- a 256 MiB matrix
  test_params = {
    { rows = 50, cols = 300 },    -- one partial block of rows
    { rows = 257, cols = 64 },    -- three blocks, the last one row
  },
  buffers = {
    x = { "f32", "rows*cols", init = "uniform" },
    idx = { "i32", "rows", output = true },
  },
  args = { "rows", "cols", "x", "idx" },
  reference = "reference.c",
  -- idx is i32: compared exactly.
  flops = "rows*cols",
  bytes = "4*(rows*cols + rows)",
}
