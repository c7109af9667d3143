local workload = require "klineage.workload"
local randgen = require "kl.randgen"
local proc = require "kl.proc"
local verdicts = require "klineage.base.verdicts"

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

-- Small limits, so that a spec that passes one is caught at once.
local SMALL = {
  chunk = { instructions = 1000000, memory = 16 << 20 },
  init = { instructions = 1000000, memory = 16 << 20 },
  run = { instructions = 1000000, memory = 16 << 20 },
}
local function load_small(text, limits)
  return workload.load(write_workload(text), { limits = limits or SMALL })
end

describe("workload: a spec is untrusted code", function()
  it("runs without os, io or require: os.execute no longer runs", function()
    local marker = os.tmpname()
    os.remove(marker)
    local w, err = load_small("os.execute('touch " .. marker .. "')\n" .. spec_with({}))
    expect(w):is_nil()
    expect(err.verdict):equals("bad_input")
    expect(err):contains("workload.lua:1: attempt to index a nil value (global 'os')")
    expect(io.open(marker, "rb")):is_nil()
    expect(select(2, load_small("local p = require('kl.proc')\n" .. spec_with({})))):contains("global 'require'")
  end)
  it("stops a file that loops forever or eats memory, naming the limit", function()
    local _, err = load_small("while true do end")
    expect(err):matches("/workload%.lua: exceeded the instruction limit of 1000000 %(workload%.LIMITS%.chunk%.instructions%)$")
    _, err = load_small("local s = string.rep('x', 1 << 30)\n" .. spec_with({}))
    expect(err):contains("exceeded the memory limit of 16 MiB (workload.LIMITS.chunk.memory)")
  end)
  it("refuses a file over the size limit before running it", function()
    local _, err = load_small(string.rep("-- padding\n", 200) .. spec_with({}), { file_bytes = 1024 })
    expect(err):matches("workload%.lua: the file is %d+ bytes, over the limit of 1024")
  end)
  it("refuses metatables, in the returned table and anywhere in it", function()
    local _, err = load_small("return setmetatable({}, { __index = function() while true do end end })")
    expect(err):contains("workload.lua: the value it returns: a table with a metatable (a spec is plain data)")
    local text = spec_with({}):gsub("^return ", "local s = "):gsub("\n$", "")
    _, err = load_small(text .. "\ns.buffers = setmetatable(s.buffers, { __pairs = function() while true do end end })\nreturn s\n")
    expect(err):contains("workload.lua: buffers: a table with a metatable")
  end)
  it("allows functions only as run and a buffer's init", function()
    local _, err = load_small(spec_with({ flops = "function() while true do end end" }))
    expect(err):contains("workload.lua: flops: a function is not allowed here")
    local w = assert(load_small(spec_with({ run = "function(ctx) ctx:launch({}) end" })))
    expect(type(w.run)):equals("function")
  end)
  it("runs an init under the init limits, and names it when it fails", function()
    local function inputs(init)
      local w = assert(load_small(spec_with({ buffers = '{ x = { "f32", "n", init = ' .. init .. ' }, y = { "f32", "n", output = true } }' })))
      return workload.host_inputs(w, w.params, 1)
    end
    local data, err = inputs("function() while true do end end")
    expect(data):is_nil()
    expect(err.verdict):equals("bad_input")
    expect(err):matches("workload%.lua: buffers%.x%.init: exceeded the instruction limit of 1000000 %(workload%.LIMITS%.init%.instructions%)$")
    _, err = inputs("function() error('no input today') end")
    expect(err):matches("workload%.lua: buffers%.x%.init: .*workload%.lua:%d+: no input today$")
    _, err = inputs("function(p) return setmetatable({}, { __len = function() return p.n end }) end")
    expect(err):contains("buffers.x.init returned a table with a metatable")
    _, err = inputs("function(p) return string.rep('\\0', 1 << 30) end")
    expect(err):contains("buffers.x.init: exceeded the memory limit of 16 MiB")
  end)
  it("runs a spec's run under the run limits: its errors are bad_input, the engine's its own", function()
    local w = assert(load_small(spec_with({ run = "function(ctx, p) if p.n > 50 then error('too big') end ctx:launch({}) end" })))
    local ok, err = workload.run(w, { launch = function() end }, { n = 100 })
    expect(ok):is_nil()
    expect(err.verdict):equals("bad_input")
    expect(err):contains("workload.lua: run: ")
    expect(err):contains("too big")
    local fault = verdicts.failure("fault", "the kernel crashed")
    ok, err = workload.run(w, { launch = function() error(fault, 0) end }, { n = 10 })
    expect(rawequal(err, fault)):is_true()
    expect(workload.run(w, { launch = function() end }, { n = 10 })):is_true()
  end)
end)

describe("workload: tolerances that pass anything are refused", function()
  it("infinite, NaN or negative atol, and rtol of 1 or more", function()
    expect(load_error({ tolerance = "{ rtol = 1e-5, atol = math.huge }" })):contains("tolerance.atol: must be a number >= 0 and finite, got inf")
    expect(load_error({ tolerance = "{ rtol = 1e-5, atol = 0/0 }" })):contains("tolerance.atol: must be a number >= 0 and finite")
    expect(load_error({ tolerance = "{ rtol = 1e-5, atol = -1e-3 }" })):contains("tolerance.atol: must be a number >= 0")
    expect(load_error({ tolerance = "{ rtol = 1, atol = 0 }" })):contains("tolerance.rtol: must be below 1")
    expect(load_error({ tolerance = "{ rtol = 1/0 }" })):contains("tolerance.rtol: must be a number >= 0 and finite")
  end)
end)

describe("workload: buffer sizes", function()
  it("refuses a size whose buffers exceed the limit before anything is allocated", function()
    local d = write_workload(spec_with({ test_params = "{ { n = 1 << 31 } }" }))
    local w = assert(workload.load(d, { limits = { buffer_bytes = 1 << 30 } })) -- a bench size may be meant for a GPU
    local counts, err = workload.counts(w, workload.sizes(w)[1].params)
    expect(counts):is_nil()
    expect(err.verdict):equals("bad_input")
    expect(err):contains("buffers: 16.0 GiB in all at a = 1.5, n = 2147483648 (buffers.x: 8.0 GiB), over the limit of 1.0 GiB (workload.LIMITS.buffer_bytes)")
    expect(workload.counts(w, w.params)):equals({ x = 100, y = 100 })
    -- the backend's memory, where it is smaller
    expect(select(2, workload.counts(w, w.params, 512))):contains("over the limit of 0.0 MiB (the device's memory)")
    -- and a count past 2^63 bytes does not wrap around
    expect(select(2, workload.counts(w, { n = math.maxinteger // 2, a = 1 }))):contains("over the limit")
  end)
  it("defaults to a quarter of the host's memory", function()
    expect(workload.LIMITS.buffer_bytes):equals(require("kl.memcap").physical() // 4)
  end)
end)

describe("workload: { \"int\", lo, hi } bounds may be expressions", function()
  local function int_spec(lo, hi, extra)
    local fields = { buffers = '{ x = { "i32", "n", init = { "int", ' .. lo .. ', ' .. hi .. ' } }, y = { "f32", "n", output = true } }' }
    for k, v in pairs(extra or {}) do fields[k] = v end
    return spec_with(fields)
  end
  it("evaluates them per size, for the worker and for the host", function()
    local w = assert(workload.load(write_workload(int_spec(0, '"n - 1"', { test_params = "{ { n = 7 } }" }))))
    expect(workload.init_of(w, "x", { n = 7, a = 1 })):equals({ "int", 0, 6 })
    expect(workload.init_of(w, "x", w.params)):equals({ "int", 0, 99 })
    local values = randgen.unpack("i32", assert(workload.host_inputs(w, { n = 7, a = 1 }, 3)).x)
    expect(#values):equals(7)
    for _, v in ipairs(values) do expect(v >= 0 and v <= 6):is_true() end
    -- constant bounds stay the table the spec wrote
    local c = assert(workload.load(write_workload(int_spec(-5, 5))))
    expect(workload.init_of(c, "x", c.params)):equals({ "int", -5, 5 })
  end)
  it("checks them at every size when the spec loads", function()
    expect(load_error({ buffers = '{ x = { "i32", "n", init = { "int", "n", 50 } }, y = { "f32", "n", output = true } }' }))
      :contains("buffers.x.init: { \"int\", 100, 50 } has lo > hi at a = 1.5, n = 100 (at bench size)")
    expect(load_error({ buffers = '{ x = { "i32", "n", init = { "int", 0, "m" } }, y = { "f32", "n", output = true } }' }))
      :contains("buffers.x.init hi: 'm' uses 'm', which is not in params")
    expect(load_error({ buffers = '{ x = { "i32", "n", init = { "int", 0, "a" } }, y = { "f32", "n", output = true } }' }))
      :contains("buffers.x.init hi 'a' = 1.5, not an integer")
  end)
end)

describe("workload: init functions see what they come after", function()
  -- offsets (row starts) first; the columns of each row sorted, from the offsets
  local CSR = [[
return {
  kernel = "k", params = { R = 5, NNZ = 12 },
  buffers = {
    rows = { "i32", "R + 1", init = function(p, rng, ctx)
      local t = { 0 }
      for r = 1, p.R - 1 do t[r + 1] = math.min(p.NNZ, t[r] + rng:int(0, 4)) end
      t[p.R + 1] = p.NNZ
      return t
    end },
    cols = { "i32", "NNZ", after = { "rows" }, init = function(p, rng, ctx)
      local rows = randgen.unpack("i32", ctx.buffers.rows)
      local t = {}
      for r = 1, p.R do
        local prev = -1
        for k = rows[r] + 1, rows[r + 1] do prev = prev + 1 + rng:int(0, 2); t[k] = prev end
      end
      assert(ctx.count == p.NNZ and ctx.seed == 4 and ctx.name == "cols" and ctx.type == "i32", "ctx")
      return t
    end },
    vals = { "f32", "NNZ", init = "uniform" },
    y = { "f32", "R", output = true },
  },
  args = { "R", "rows", "cols", "vals", "y" }, tolerance = { rtol = 1e-5 }, flops = "NNZ", bytes = "NNZ",
}
]]
  it("builds the buffers an init comes after first and hands it their bytes", function()
    local w = assert(workload.load(write_workload(CSR)))
    expect(w.buffer_by_name.cols.after):equals({ "rows" })
    local data = assert(workload.host_inputs(w, w.params, 4, { "cols" }))
    -- only what was asked and what it needs: vals is the device's to fill
    expect(data.vals):is_nil()
    local rows, cols = randgen.unpack("i32", data.rows), randgen.unpack("i32", data.cols)
    expect(rows[1]):equals(0)
    expect(rows[#rows]):equals(12)
    for r = 1, 5 do
      for k = rows[r] + 2, rows[r + 1] do expect(cols[k] > cols[k - 1]):is_true() end
    end
    -- the same seed gives the same bytes
    expect(assert(workload.host_inputs(w, w.params, 4, { "cols" })).cols == data.cols):is_true()
  end)
  it("refuses an order that cannot be, and after on what has nothing to give", function()
    local function with(rows_after, cols_after)
      local text = CSR:gsub('rows = { "i32", "R %+ 1",', 'rows = { "i32", "R + 1", after = ' .. rows_after .. ',')
      return (text:gsub('after = { "rows" }', 'after = ' .. cols_after, 1))
    end
    local _, err = workload.load(write_workload(with('{ "cols" }', '{ "rows" }')))
    expect(err):contains("buffers.cols.after: is a cycle: cols -> rows -> cols")
    _, err = workload.load(write_workload(with('{ "rows" }', '{ "rows" }')))
    expect(err):contains("buffers.rows.after[1]: is the buffer itself")
    _, err = workload.load(write_workload(with('{}', '{ "y" }')))
    expect(err):contains("buffers.cols.after[1]: 'y' has no init: there is nothing to hand over")
    _, err = workload.load(write_workload(with('{}', '{ "nope" }')))
    expect(err):contains("buffers.cols.after[1]: 'nope' is not a buffer")
    _, err = workload.load(write_workload((CSR:gsub('vals = { "f32", "NNZ",', 'vals = { "f32", "NNZ", after = { "rows" },'))))
    expect(err):contains("buffers.vals.after: is for an init function")
  end)
end)
