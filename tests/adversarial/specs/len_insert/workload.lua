-- table.insert at the front of a table whose __len says 2^40: a C loop over
-- empty slots.
table.insert(setmetatable({}, { __len = function() return 1 << 40 end }), 1, "first")
return {
  name = "len_insert", kernel = "saxpy",
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
