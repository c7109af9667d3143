-- All-pairs gravitational accelerations of n bodies (G = 1, Plummer
-- softening eps2), positions uniform in the cube [-1, 1)^3 and masses in
-- [0.5, 1.5). A held-out task: no lineage under gpu/workloads.
local function masses(p, rng)
  local m = {}
  for i = 1, p.n do m[i] = 1.0 + 0.5 * rng:uniform() end
  return m
end

return {
  name = "nbody",
  kernel = "nbody",
  params = { n = 32768, eps2 = 0.01 },   -- 1.1e9 interactions, some 2e10 flops; 512 KiB in
  test_params = {
    { n = 777 },   -- a partial last block
    { n = 256 },   -- two whole blocks
  },
  buffers = {
    px = { "f32", "n", init = "uniform" },
    py = { "f32", "n", init = "uniform" },
    pz = { "f32", "n", init = "uniform" },
    mass = { "f32", "n", init = masses },
    ax = { "f32", "n", output = true },
    ay = { "f32", "n", output = true },
    az = { "f32", "n", output = true },
  },
  args = { "n", "eps2", "px", "py", "pz", "mass", "ax", "ay", "az" },
  alias = {}, -- never launched in place: restrict and ldg may keep its pointers apart
  reference = "reference.c",
  -- The largest acceleration is near 2e4 (a body at a corner of the cube)
  -- and a serial float sum of 32768 terms of either sign drifts from the
  -- exact one by about 9e-6 of it (0.16: measured on the CPU with float
  -- arithmetic as written and rsqrtf's 2 ulps, 1 body in 7), a sum in tiles
  -- of 256 by 6e-7: 1e-4 of max|a| holds either order against the other.
  -- The inverse square instead of the cube misses by 0.5 or more of a
  -- typical acceleration.
  tolerance = { rtol = 1e-4, atol = 1e-5 },
  flops = "20*n*n",
  bytes = "4*7*n",
}
