-- Returns its table behind a metatable: reading it, the engine would run
-- the spec's metamethods outside every limit.
local spec = {
  name = "metatable_return", kernel = "saxpy",
  params = { n = 1000, a = 2.0 },
  test_params = { { n = 100 }, { n = 333 } },
  buffers = {
    x = { "f32", "n", init = "uniform" },
    y = { "f32", "n", init = "normal", output = true },
  },
  args = { "n", "a", "x", "y" },
  tolerance = { rtol = 1e-6, atol = 1e-7 },
  flops = "2*n", bytes = "12*n",
}
return setmetatable({}, { __index = spec, __pairs = function() return next, spec end })
