-- A segmented inclusive prefix sum of n floats: head flags (bytes) mark
-- where segments start, and each output sums its segment up to itself. A
-- held-out task: no lineage under gpu/workloads.
return {
  name = "segmented_scan",
  kernel = "segmented_scan",
  -- 2^23 values in segments of S = 128 on average: 72 MiB moved, some 5e8
  -- additions as written
  params = { n = 8388608, S = 128 },
  test_params = {
    { n = 1000, S = 7 },     -- short segments, a partial last block
    { n = 30001, S = 40 },   -- a partial last block
  },
  buffers = {
    -- each element starts a segment with probability 1 / S, so segments
    -- have geometric lengths, some of them long
    head = { "u8", "n", init = function(p, rng)
      local h, cut = {}, 2.0 / p.S - 1.0   -- uniform() is in [-1, 1)
      for i = 1, p.n do h[i] = rng:uniform() < cut and 1 or 0 end
      return h
    end },
    x = { "f32", "n", init = "uniform" },
    y = { "f32", "n", output = true },
  },
  args = { "n", "head", "x", "y" },
  alias = {}, -- never launched in place: restrict and ldg may keep its pointers apart
  reference = "reference.c",
  -- A segment sums some 128 values below 1 (the longest a few thousand):
  -- max|y| is some tens and float rounding in any order (backward, forward,
  -- a tree) stays near 1e-6 of it; a segment's head left out or the
  -- previous segment's tail taken in misses by the value itself.
  tolerance = { rtol = 1e-5, atol = 1e-6 },
  flops = "n",
  bytes = "9*n",
}
