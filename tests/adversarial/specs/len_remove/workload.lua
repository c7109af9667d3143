-- table.remove on a table whose __len says 2^63 - 1: the C function shifts
-- that many empty slots, neither allocating nor running Lua.
table.remove(setmetatable({}, { __len = function() return math.maxinteger end }), 1)
return {
  name = "len_remove", kernel = "saxpy",
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
