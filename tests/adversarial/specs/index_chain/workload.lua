-- Few instructions, each slow: every read walks a chain of 1990 __index
-- tables (Lua stops at 2000) in C, so the instruction limit alone would
-- take hours to end it.
local t = {}
for _ = 1, 1990 do t = setmetatable({}, { __index = t }) end
local x
for _ = 1, math.maxinteger do x = t.missing end
return {
  name = "index_chain", kernel = "saxpy",
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
