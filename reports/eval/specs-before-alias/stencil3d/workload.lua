-- One explicit heat-equation step with the 3D 7-point stencil on an
-- nz x ny x nx grid (x fastest in memory): every interior point moves by
-- alpha times the discrete Laplacian of its six neighbours, the boundary
-- is copied. A held-out task: no lineage under gpu/workloads.
return {
  name = "stencil3d",
  kernel = "stencil3d",
  params = { nz = 384, ny = 384, nx = 384, alpha = 0.1 },   -- 216 MiB in, 216 MiB out
  test_params = {
    { nz = 13, ny = 17, nx = 20 },   -- ragged: partial 8 x 8 x 8 blocks on every axis
    { nz = 16, ny = 24, nx = 40 },   -- whole blocks, not a cube
  },
  buffers = {
    u = { "f32", "nz*ny*nx", init = "uniform" },
    v = { "f32", "nz*ny*nx", output = true },
  },
  args = { "nz", "ny", "nx", "alpha", "u", "v" },
  reference = "reference.c",
  -- Seven terms of magnitude below 1 summed in float, then scaled by 0.1
  -- and added to the centre: a few ulps of max|v|; a lost or shifted
  -- neighbour moves a point by about alpha, five orders above 1e-6.
  tolerance = { rtol = 1e-6, atol = 1e-7 },
  flops = "9*nz*ny*nx",
  bytes = "8*nz*ny*nx",
}
