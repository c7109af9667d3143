-- The gate reads a kernel's signature from its source: hostile shapes of
-- parameter lists are refused, never guessed.
local kernel = require "klineage.gate.kernel"
local files = require "klineage.base.files"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local adversarial = here .. "/../adversarial"

describe("gate: kernel signatures", function()
  it("reads a plain parameter list", function()
    local kinds = assert(kernel.signature("extern \"C\" __global__ void k(int n, float a, float *y) {}", "k"))
    expect(kinds):equals({ "i32", "f32", "buf" })
  end)
  it("refuses a parameter list with #if branches, naming the line", function()
    local source = assert(files.read_text(adversarial .. "/signature_if/kernel.cu"))
    local kinds, failure = kernel.signature(source, "scale")
    expect(kinds):is_nil()
    expect(failure.verdict):equals("bad_input")
    expect(failure.message):contains("preprocessor line (line 5: #if USE_SCALE)")
  end)
end)
