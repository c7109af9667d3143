-- `klineage bench` on the fake backend: the table's sizes, same-size
-- ratios, the workload's rate, and the figure lines scripts read.
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local fixture = here .. "/../fixtures/workloads/saxpy_sizes"

describe("klineage bench", function()
  local out, code = klineage("bench", fixture, "--backend", "fake", "--max-seconds", "0.05", "--journal", os.tmpname() .. ".d")

  it("prints one row per version and one per extra bench size", function()
    expect(code):equals(0)
    expect(out):matches("\nv0%.cu%s+ok")
    expect(out):matches("\nv1%.cu%s+ok")
    expect(out):matches("\n  n=5000%s+ok")
    -- v1's requires refuses n = 5000: said, and no ratio invented for it
    expect(out):matches("\n  n=5000%s+not_allowed%s+%-")
  end)

  it("adds the workload's rate as a column and a figure", function()
    expect(out):contains("Mel/s")
    expect(out):matches("saxpy_sizes%-expert%-rate: [%d.]+ Mel/s\n")
  end)

  it("ends with figure lines", function()
    expect(out):matches("saxpy_sizes%-v0%-time: [%d.]+ ms\n")
    expect(out):matches("saxpy_sizes%-expert%-speedup%-over%-v0: [%d.]+ x\n$")
  end)
end)

describe("klineage bench with a broken annotation", function()
  it("reports the version's verdict instead of crashing", function()
    local dir = os.tmpname() .. ".d"
    assert(os.execute("mkdir -p '" .. dir .. "' && cp '" .. fixture .. "'/* '" .. dir .. "'/"))
    local h = assert(io.open(dir .. "/v1.cu", "w"))
    h:write("// v1: broken\n// @kl launch grid(n / 1024) block(256)\n",
      "extern \"C\" __global__ void saxpy(int n, float a, const float *x, float *y) {}\n")
    h:close()
    local out, code = klineage("bench", dir, "--backend", "fake", "--max-seconds", "0.05", "--journal", dir .. "/runs")
    expect(code):equals(0)
    expect(out):matches("\nv1%.cu%s+bad_input")
    expect(out):contains("use cdiv(a, b)")
  end)
end)
