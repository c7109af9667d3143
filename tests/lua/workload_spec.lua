local workload = require "klineage.workload"
local randgen = require "kl.randgen"
local proc = require "kl.proc"

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$")
local fixtures = here .. "/../fixtures/workloads"

-- Writes a workload.lua (and any extra files) into a fresh folder.
local scratch = os.tmpname()
os.remove(scratch)
assert(proc.mkdir_p(scratch))
local counter = 0
local function write_workload(body, extra)
  counter = counter + 1
  local dir = string.format("%s/w%d", scratch, counter)
  assert(proc.mkdir_p(dir))
  local h = assert(io.open(dir .. "/workload.lua", "w"))
  h:write(body)
  h:close()
  for name, text in pairs(extra or {}) do
    local f = assert(io.open(dir .. "/" .. name, "w"))
    f:write(text)
    f:close()
  end
  return dir
end

-- A valid spec, as text, with one piece replaced.
local base = {
  kernel = '"k"',
  params = "{ n = 100, a = 1.5 }",
  buffers = '{ x = { "f32", "n", init = "uniform" }, y = { "f32", "n", init = "zeros", output = true } }',
  args = '{ "n", "a", "x", "y" }',
  tolerance = "{ rtol = 1e-5, atol = 0 }",
  flops = '"2*n"',
  bytes = '"8*n"',
}
local function spec_with(changes)
  local fields = {}
  for k, v in pairs(base) do fields[k] = v end
  for k, v in pairs(changes) do fields[k] = v or nil end
  local parts = {}
  for k, v in pairs(fields) do
    if v then parts[#parts + 1] = k .. " = " .. v end
  end
  return "return { " .. table.concat(parts, ",\n") .. " }\n"
end
local function load_error(changes, extra)
  local w, err = workload.load(write_workload(spec_with(changes), extra))
  if w then fail("expected a load error for %s", spec_with(changes)) end
  return err
end

describe("workload: loading", function()
  local w = assert(workload.load(fixtures .. "/saxpy"))
  it("loads a spec and keeps its fields", function()
    expect(w.name):equals("saxpy")
    expect(w.kernel):equals("saxpy")
    expect(w.outputs):equals({ "y" })
    expect(w.buffer_list[1].name):equals("x")
    expect(w.buffer_list[1].stream):equals(0)
    expect(w.buffer_list[2].stream):equals(1)
  end)
  it("merges each test entry over params, then the bench size", function()
    local sizes = workload.sizes(w)
    expect(#sizes):equals(3)
    expect(sizes[1].params):equals({ n = 1000, a = 2.0 })
    expect(sizes[2].params):equals({ n = 4097, a = -0.5 })
    expect(sizes[3].label):equals("bench")
    expect(sizes[3].bench):is_true()
    expect(sizes[3].params.n):equals(1 << 20)
  end)
  it("evaluates counts, flops and bytes", function()
    local p = workload.sizes(w)[2].params
    expect(workload.counts(w, p)):equals({ x = 4097, y = 4097 })
    expect(workload.flops(w, p)):equals(8194)
    expect(workload.bytes(w, p)):equals(12 * 4097)
  end)
  it("maps args to buffers and parameter values", function()
    expect(workload.args(w, { n = 5, a = 2.0 })):equals({
      { param = "n", value = 5 }, { param = "a", value = 2.0 }, { buffer = "x" }, { buffer = "y" } })
  end)
  it("finds the real workloads by name", function()
    local sgemm, err = workload.load("sgemm")
    expect(err):is_nil()
    expect(sgemm.kernel):equals("sgemm")
    expect(#workload.sizes(sgemm)):at_least(3)
  end)
  it("accepts bench_params as extra bench sizes", function()
    local d = write_workload(spec_with({ bench_params = "{ { n = 7 } }" }))
    local sizes = workload.sizes(assert(workload.load(d)))
    expect(sizes[#sizes].params.n):equals(7)
    expect(sizes[#sizes].bench):is_true()
  end)
  it("says which file it looked for", function()
    local w2, err = workload.load("no_such_workload_xyz")
    expect(w2):is_nil()
    expect(err):contains("no workload 'no_such_workload_xyz'")
    expect(err):contains("gpu/workloads/no_such_workload_xyz/workload.lua")
  end)
end)

describe("workload: host inputs", function()
  local w = assert(workload.load(fixtures .. "/saxpy"))
  local p = { n = 1000, a = 2.0 }
  it("generates the buffers from the seed, deterministically", function()
    local a = assert(workload.host_inputs(w, p, 1))
    local b = assert(workload.host_inputs(w, p, 1))
    local c = assert(workload.host_inputs(w, p, 2))
    expect(#a.x):equals(4000)
    expect(a.x == b.x):is_true()
    expect(a.x == c.x):is_false()
    expect(a.x == a.y):is_false() -- distinct streams
    expect(a.x == randgen.fill("f32", 1000, "uniform", 1, 0)):is_true()
  end)
  it("runs custom init functions and checks integer types", function()
    local h = assert(workload.load(fixtures .. "/histogram"))
    expect(workload.tolerance(h, "counts")):equals({ rtol = 0, atol = 0 })
    local data = assert(workload.host_inputs(h, { n = 333, bins = 7 }, 9))
    expect(randgen.unpack("i32", data.offsets)):equals({ 0, 3, 6, 9, 12, 15, 18, 21 })
    local keys = randgen.unpack("u8", data.keys)
    expect(#keys):equals(333)
    expect(type(h.run)):equals("function")
  end)
  it("reports a custom init that returns the wrong length", function()
    local d = write_workload(spec_with({
      buffers = '{ x = { "f32", "n", init = function(p, rng) return { 1, 2 } end }, y = { "f32", "n", output = true } }' }))
    local _, err = workload.host_inputs(assert(workload.load(d)), { n = 3, a = 1 }, 1)
    expect(err):contains("buffers.x.init returned 2 values, the count is 3")
  end)
  it("reports a count that is not a positive integer, at load time and later", function()
    local d = write_workload(spec_with({ buffers = '{ x = { "f32", "n - 200", init = "uniform" }, y = { "f32", "n", output = true } }' }))
    local _, err = workload.load(d)
    expect(err):contains("buffers.x count 'n - 200' = -100, not a positive integer (at bench size)")
    local w = assert(workload.load(fixtures .. "/saxpy"))
    expect(select(2, workload.counts(w, { n = 0 }))):contains("buffers.x count 'n' = 0")
  end)
end)

describe("workload: validation errors name the file and the field", function()
  it("unknown buffer type", function()
    local err = load_error({ buffers = '{ x = { "f31", "n", init = "uniform" }, y = { "f32", "n", output = true } }' })
    expect(err):contains("/workload.lua: buffers.x: unknown type 'f31' (f32 f64 f16 bf16 i32 u32 i64 u8)")
  end)
  it("unknown top-level field", function()
    expect(load_error({ tolerence = "{}" })):contains("tolerence: unknown field")
  end)
  it("uniform on an integer buffer", function()
    local err = load_error({ buffers = '{ x = { "i32", "n", init = "uniform" }, y = { "f32", "n", output = true } }' })
    expect(err):contains("buffers.x.init: \"uniform\" needs a float type, the buffer is i32")
  end)
  it("an int range with lo > hi, or a malformed one", function()
    expect(load_error({ buffers = '{ x = { "i32", "n", init = { "int", 5, 1 } }, y = { "f32", "n", output = true } }' }))
      :contains("buffers.x.init: { \"int\", 5, 1 } has lo > hi")
    expect(load_error({ buffers = '{ x = { "i32", "n", init = { "int", 0.5, 1 } }, y = { "f32", "n", output = true } }' }))
      :contains("integer bounds")
  end)
  it("an unknown init", function()
    expect(load_error({ buffers = '{ x = { "f32", "n", init = "random" }, y = { "f32", "n", output = true } }' }))
      :contains('buffers.x.init: must be "uniform", "normal", "zeros"')
  end)
  it("a test entry with a key that params lacks", function()
    expect(load_error({ test_params = "{ { m = 3 } }" })):contains("test_params[1].m: is not in params")
  end)
  it("an arg that is neither buffer nor param, and a buffer not passed", function()
    expect(load_error({ args = '{ "n", "a", "x", "y", "z" }' })):contains("args[5]: 'z' is neither a buffer nor a key of params")
    expect(load_error({ args = '{ "n", "a", "y" }' })):contains("buffers.x: is not passed in args")
  end)
  it("float outputs need a tolerance, and tolerances are non-negative", function()
    expect(load_error({ tolerance = false })):contains("tolerance: missing")
    expect(load_error({ tolerance = "{ rtol = -1 }" })):contains("tolerance.rtol: must be a number >= 0")
  end)
  it("expressions must parse and use only params", function()
    expect(load_error({ flops = '"2*m"' })):contains("flops: '2*m' uses 'm', which is not in params")
    expect(load_error({ bytes = '"8*n +"' })):contains("bytes: incomplete expression")
    expect(load_error({ flops = false })):contains("flops: missing")
    expect(load_error({ buffers = '{ x = { "f32", "n / 2", init = "uniform" }, y = { "f32", "n", output = true } }' }))
      :contains("buffers.x count: '/' between integers")
  end)
  it("the lineage files must exist", function()
    expect(load_error({ lineage = '{ "v0.cu", "v1.cu" }' }, { ["v0.cu"] = "x" }))
      :contains("lineage[2]: 'v1.cu' does not exist in")
  end)
  it("needs an output, a kernel, params and a run function if any", function()
    expect(load_error({ buffers = '{ x = { "f32", "n", init = "uniform" } }', args = '{ "x" }' }))
      :contains("buffers: no buffer has output = true")
    expect(load_error({ kernel = false })):contains("kernel: must name")
    expect(load_error({ params = false })):contains("params: missing")
    expect(load_error({ params = '{ n = "big" }' })):contains("params.n: must be a number, got string")
    expect(load_error({ run = "42" })):contains("run: must be a function(ctx, p)")
  end)
  it("a file that raises or does not parse", function()
    local w, err = workload.load(write_workload("return {"))
    expect(w):is_nil()
    expect(err):contains("workload.lua")
    w, err = workload.load(write_workload("error('boom')"))
    expect(err):contains("boom")
  end)
end)

describe("workload: rate and monotone", function()
  it("evaluates a rate per second of a run", function()
    local w = assert(workload.load(write_workload(spec_with({ rate = '{ unit = "Mel/s", count = "n", per = 1e6 }' }))))
    expect(workload.rate(w, w.params, 1e-3)):equals(0.1) -- 100 elements in 1 ms
  end)
  it("rejects a rate without a unit, a bad count or a zero divisor", function()
    expect(load_error({ rate = '{ count = "n", per = 1 }' })):contains("rate.unit")
    expect(load_error({ rate = '{ unit = "x/s", count = "m", per = 1 }' })):contains("rate.count")
    expect(load_error({ rate = '{ unit = "x/s", count = "n", per = 0 }' })):contains("rate.per")
  end)
  it("accepts monotone versions of the lineage with one before them", function()
    local extra = { ["v0.cu"] = "", ["v1.cu"] = "" }
    local w = assert(workload.load(write_workload(spec_with({ lineage = '{ "v0.cu", "v1.cu" }', monotone = '{ "v1.cu" }' }), extra)))
    expect(w.monotone):equals({ "v1.cu" })
    expect(load_error({ lineage = '{ "v0.cu", "v1.cu" }', monotone = '{ "v0.cu" }' }, extra)):contains("no version before it")
    expect(load_error({ lineage = '{ "v0.cu", "v1.cu" }', monotone = '{ "v2.cu" }' }, extra)):contains("not in the lineage")
  end)
  it("rejects an unknown vendor library", function()
    expect(load_error({ vendor = '{ name = "x", library = "mkl", routine = "sgemm_rowmajor", args = { "n", "n", "n", "a", "x", "x", "a", "y" } }' }))
      :contains("unknown library 'mkl'")
  end)
end)
