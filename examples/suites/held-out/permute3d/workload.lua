-- A permutation of the axes of an A x B x C tensor into C x A x B (both
-- row-major). A held-out task: no lineage under gpu/workloads.
return {
  name = "permute3d",
  kernel = "permute3d",
  params = { A = 256, B = 256, C = 1024 },   -- 256 MiB in, 256 MiB out
  test_params = {
    { A = 5, B = 37, C = 13 },   -- 2405 elements: a partial last block, odd extents
    { A = 8, B = 32, C = 64 },   -- whole blocks
  },
  buffers = {
    ["in"] = { "f32", "A*B*C", init = "uniform" },
    out = { "f32", "A*B*C", output = true },
  },
  args = { "A", "B", "C", "in", "out" },
  alias = {}, -- never launched in place: restrict and ldg may keep its pointers apart
  reference = "reference.c",
  tolerance = { rtol = 0, atol = 0 },   -- a copy: exact
  flops = "0",
  bytes = "8*A*B*C",
}
