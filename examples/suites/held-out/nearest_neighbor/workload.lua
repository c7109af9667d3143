-- The nearest neighbour (1-NN) of Q query points among R reference
-- points, coordinates integers in [-S, S]^3 interleaved x, y, z; ties go
-- to the smallest index. S is small at the test sizes so that ties are
-- common there and the tie rule is checked. A held-out task: no lineage
-- under gpu/workloads.
return {
  name = "nearest_neighbor",
  kernel = "nearest_neighbor",
  params = { Q = 32768, R = 32768, S = 1000 },   -- 1.1e9 pairs; 384 KiB per point set
  test_params = {
    { Q = 300, R = 257, S = 4 },    -- a partial last block; 729 places, many ties
    { Q = 700, R = 1000, S = 20 },
  },
  buffers = {
    query = { "i32", "3*Q", init = { "int", "-S", "S" } },
    ref = { "i32", "3*R", init = { "int", "-S", "S" } },
    nearest = { "i32", "Q", output = true },
  },
  args = { "Q", "R", "query", "ref", "nearest" },
  alias = {}, -- never launched in place: restrict and ldg may keep its pointers apart
  reference = "reference.c",
  -- nearest is i32: compared exactly. Squared distances reach 3 (2 S)^2 =
  -- 1.2e7 at the bench size, well inside int.
  flops = "9*Q*R",
  bytes = "4*(3*Q + 3*R + Q)",
}
