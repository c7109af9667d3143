-- kl.cuda must load and answer sensibly on machines without a driver: the
-- binary never links libcuda. On a GPU machine the same checks hold.
local cuda = require "kl.cuda"

describe("kl.cuda without assumptions about the machine", function()
  it("load() answers true or nil and a reason", function()
    local ok, why = cuda.load()
    if ok then
      expect(ok):is_true()
      expect(cuda.driver_version()):at_least(12000)
    else
      expect(ok):is_nil()
      expect(why):is_a("string")
      expect(#why > 0):is_true()
    end
  end)
  it("raises a clear error from context() when there is no driver", function()
    if cuda.load() then
      expect(#cuda.devices()):at_least(1)
    else
      expect(function() cuda.context(0) end):raises("CUDA driver not available")
    end
  end)
end)
