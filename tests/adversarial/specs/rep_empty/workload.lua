-- An init that repeats the empty string 2^63 - 1 times: string.rep's C loop
-- copies nothing that many times.
return {
  name = "rep_empty", kernel = "saxpy",
  params = { n = 1000, a = 2.0 },
  test_params = { { n = 100 }, { n = 333 } },
  buffers = {
    x = { "f32", "n", init = function() return string.rep("", math.maxinteger) end },
    y = { "f32", "n", init = "normal", output = true },
  },
  args = { "n", "a", "x", "y" },
  tolerance = { rtol = 1e-6, atol = 1e-7 },
  flops = "2*n", bytes = "12*n",
}
