-- table.sort of 2^31 - 2 elements that a C function (rawlen) makes up: every
-- step of the sort runs in C.
table.sort(setmetatable({}, { __len = function() return (1 << 31) - 2 end, __index = rawlen }))
return {
  name = "len_sort", kernel = "saxpy",
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
