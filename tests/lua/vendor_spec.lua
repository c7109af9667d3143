-- kl.vendor where there may be no GPU: bad arguments raise, and a library
-- that cannot load says why instead of failing later.
local vendor = require "kl.vendor"

describe("kl.vendor without a GPU", function()
  it("names the libraries it knows", function()
    local ok, err = pcall(vendor.load, "mkl")
    expect(ok):is_false()
    expect(err):contains("known libraries: cublas, cudnn")
  end)
  it("returns nil and a reason when a library cannot be used", function()
    for _, lib in ipairs { "cublas", "cudnn" } do
      local v, why = vendor.load(lib)
      if v then
        expect(math.type(v)):equals("integer") -- a machine with a GPU: a version
      else
        expect(why):matches(lib == "cudnn" and "^cuDNN: " or "^cuBLAS: ")
      end
    end
  end)
  it("checks the convolution's dimensions before calling cuDNN", function()
    local ok, err = pcall(vendor.conv2d_nchw_3x3, 1, 0, 8, 8, 4, 0, 0, 0)
    expect(ok):is_false()
    expect(err):contains("a dimension must be in 1 .. 2^30")
  end)
end)
