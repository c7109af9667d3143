-- An embedding lookup: out[t] = table[ids[t]] for T tokens, rows of D
-- floats taken from a V x D table (row-major), ids drawn in [0, V). A
-- held-out task: no lineage under gpu/workloads.
return {
  name = "embedding_gather",
  kernel = "embedding_gather",
  params = { T = 65536, V = 50000, D = 1024 },   -- a 195 MiB table, 256 MiB out
  test_params = {
    { T = 100, V = 37, D = 65 },     -- partial 16 x 16 blocks on both edges, repeated ids
    { T = 300, V = 1000, D = 32 },
  },
  buffers = {
    ids = { "i32", "T", init = { "int", 0, "V - 1" } },
    table = { "f32", "V*D", init = "uniform" },
    out = { "f32", "T*D", output = true },
  },
  args = { "T", "V", "D", "ids", "table", "out" },
  reference = "reference.c",
  tolerance = { rtol = 0, atol = 0 },   -- a copy: exact
  flops = "0",
  bytes = "4*(T + 2*T*D)",
}
