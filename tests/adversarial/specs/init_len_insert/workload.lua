-- An init that inserts at the front of a table whose __len says 2^62: the
-- C loop of table.insert, in a call the engine makes later.
return {
  name = "init_len_insert", kernel = "saxpy",
  params = { n = 1000, a = 2.0 },
  test_params = { { n = 100 }, { n = 333 } },
  buffers = {
    x = { "f32", "n", init = function()
      local t = setmetatable({}, { __len = function() return 1 << 62 end })
      table.insert(t, 1, 0.5)
      return t
    end },
    y = { "f32", "n", init = "normal", output = true },
  },
  args = { "n", "a", "x", "y" },
  tolerance = { rtol = 1e-6, atol = 1e-7 },
  flops = "2*n", bytes = "12*n",
}
