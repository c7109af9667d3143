-- A 256-bin histogram of n bytes: bins[b] = how many data[i] equal b. The
-- bins start at zero (the spec's init, as a user's cudaMemset would) and
-- the kernel adds to them. A held-out task: no lineage under gpu/workloads.
return {
  name = "histogram",
  kernel = "histogram",
  params = { n = 33554432 },   -- 32 MiB of bytes
  test_params = {
    { n = 1000 },     -- fewer than four blocks, the last one partial
    { n = 100003 },   -- prime: a partial last block
  },
  buffers = {
    data = { "u8", "n", init = { "int", 0, 255 } },
    bins = { "u32", "256", init = "zeros", output = true },
  },
  args = { "n", "data", "bins" },
  reference = "reference.c",
  -- bins is u32: compared exactly.
  flops = "n",
  bytes = "n + 4*256",
}
