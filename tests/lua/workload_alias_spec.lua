-- The spec's alias field (klineage.workload.alias): validated strictly, each
-- hostile form refused with bad_input and one line naming the file and
-- the field; the in-place view; the declaration the transforms get.
local workload = require "klineage.workload"
local alias = require "klineage.workload.alias"
local proc = require "kl.proc"

local scratch = os.tmpname()
os.remove(scratch)
assert(proc.mkdir_p(scratch))
local counter = 0
local function spec(alias_text, buffers, extra)
  counter = counter + 1
  local dir = string.format("%s/w%d", scratch, counter)
  assert(proc.mkdir_p(dir))
  local h = assert(io.open(dir .. "/workload.lua", "w"))
  h:write(string.format([[
return {
  kernel = "k",
  params = { n = 100, m = 100, a = 1.5 },
  test_params = { { n = 7, m = 7 } },
  buffers = %s,
  args = { "n", "a", "x", "y", "z" },
  tolerance = { rtol = 1e-5, atol = 0 },
  flops = "2*n", bytes = "8*n",%s
  %s
}
]], buffers or [[{ x = { "f32", "n", init = "uniform" }, y = { "f32", "n", output = true },
                  z = { "i32", "n", init = { "int", 0, 3 } } }]], alias_text and ("\n  alias = " .. alias_text .. ",") or "",
    extra or ""))
  h:close()
  return dir
end

local function refused(alias_text, buffers, extra)
  local w, f = workload.load(spec(alias_text, buffers, extra))
  expect(w):is_nil()
  expect(f.verdict):equals("bad_input")
  expect(f.message):contains("/workload.lua: ")
  expect(f.message):never_contains("\n")
  expect(f.message):never_contains("traceback")
  return f.message
end

describe("alias: the vocabulary", function()
  it("absent is unknown, {} is never in place, pairs are in place", function()
    local unknown = assert(workload.load(spec(nil)))
    expect(unknown.alias_pairs):is_nil()
    expect(alias.declaration(unknown)):is_nil()
    expect(alias.in_place(unknown)):is_nil()
    local never = assert(workload.load(spec("{}")))
    expect(#never.alias_pairs):equals(0)
    expect(#alias.declaration(never).pairs):equals(0)
    expect(alias.in_place(never)):is_nil()
    local w = assert(workload.load(spec('{ { "x", "y" } }')))
    expect(w.alias_pairs[1].output):equals("y") -- order-free: the output is found
    expect(w.alias_pairs[1].input):equals("x")
    local d = alias.declaration(w)
    expect(d.kernel):equals("k")
    expect(d.pairs[1][1]):equals(4) -- y is args[4], x args[3]
    expect(d.pairs[1][2]):equals(3)
    expect(alias.declared(w, "x", "y")):is_true()
    expect(alias.declared(w, "x", "z")):is_false()
  end)

  it("the in-place view merges the pair into the output, filled as the input", function()
    local w = assert(workload.load(spec('{ { "y", "x" } }')))
    local v = assert(alias.in_place(w))
    expect(#v.buffer_list):equals(2)
    expect(v.buffer_by_name.x):equals(v.buffer_by_name.y)
    local y = v.buffer_by_name.y
    expect(y.name):equals("y")
    expect(y.output):is_true()
    expect(y.poisoned):is_false()
    expect(y.init):equals("uniform")
    expect(y.stream):equals(w.buffer_by_name.x.stream)
    expect(v.sha256 ~= w.sha256):is_true()
    expect(v.in_place):equals("in place (y = x)")
    -- the same bytes as the input gets out of place
    local p = workload.sizes(w)[1].params
    local out = assert(workload.host_inputs(w, p, 5))
    local inp = assert(workload.host_inputs(v, p, 5))
    expect(inp.y):equals(out.x)
    expect(inp.x):is_nil()
  end)

  it("an init function of the input builds the merged buffer under its own name", function()
    local w = assert(workload.load(spec('{ { "y", "x" } }', [[{
      x = { "f32", "n", init = function(p, rng, ctx) local t = {} for i = 1, ctx.count do t[i] = ctx.name == "x" and i or -1 end return t end },
      y = { "f32", "n", output = true },
      z = { "i32", "n", init = { "int", 0, 3 } } }]])))
    local v = alias.in_place(w)
    local p = workload.sizes(w)[1].params
    local out = assert(workload.host_inputs(w, p, 1))
    local inp = assert(workload.host_inputs(v, p, 1))
    expect(inp.y):equals(out.x)
  end)
end)

describe("alias: hostile declarations are bad_input in one line", function()
  it("not a list of pairs", function()
    expect(refused('"y=x"')):contains("alias: must be a list of { \"output\", \"input\" } pairs")
    expect(refused('{ a = { "y", "x" } }')):contains("alias: must be a list of pairs, has key a")
    expect(refused('{ [1] = { "y", "x" }, [3] = { "y", "x" } }')):contains("alias: must be a list of pairs")
    expect(refused('{ "y", "x" }')):contains("alias[1]: must be a pair of buffer names")
    expect(refused('{ { "y" } }')):contains("alias[1]: must be a pair of buffer names")
    expect(refused('{ { "y", "x", "z" } }')):contains("alias[1]: must be a pair of buffer names")
    expect(refused('{ { "y", 3 } }')):contains("alias[1]: must be a pair of buffer names")
    expect(refused('{ { "y", "x", extra = 1 } }')):contains("alias[1]: must be a pair of buffer names")
  end)
  it("names that are not buffers", function()
    expect(refused('{ { "y", "n" } }')):contains("alias[1]: 'n' is not a buffer")
    expect(refused('{ { "y", "w" } }')):contains("alias[1]: 'w' is not a buffer")
  end)
  it("the same buffer twice, or in two pairs", function()
    expect(refused('{ { "y", "y" } }')):contains("alias[1]: names 'y' twice")
    expect(refused('{ { "y", "x" }, { "x", "y" } }')):contains("alias[2]: 'x' is already in alias[1]")
  end)
  it("another element type", function()
    expect(refused('{ { "y", "z" } }')):contains("alias[1]: 'y' is f32 and 'z' is i32")
  end)
  it("two inputs, two outputs, scratch", function()
    expect(refused('{ { "x", "z" } }', [[{ x = { "i32", "n", init = { "int", 0, 3 } }, y = { "f32", "n", output = true },
                  z = { "i32", "n", init = { "int", 0, 3 } } }]])):contains("pairs an output with an input: 'x' is input and 'z' is input")
    expect(refused('{ { "x", "y" } }', [[{ x = { "f32", "n", output = true }, y = { "f32", "n", output = true },
                  z = { "i32", "n", init = { "int", 0, 3 } } }]])):contains("'x' is output and 'y' is output")
    expect(refused('{ { "x", "y" } }', [[{ x = { "f32", "n", scratch = true }, y = { "f32", "n", output = true },
                  z = { "i32", "n", init = { "int", 0, 3 } } }]])):contains("'x' is scratch")
  end)
  it("counts that differ at some size", function()
    local msg = refused('{ { "y", "x" } }', [[{ x = { "f32", "n", init = "uniform" }, y = { "f32", "m", output = true },
                  z = { "i32", "n", init = { "int", 0, 3 } } }]], 'bench_params = { { m = 101 } },')
    expect(msg):contains("alias[1]: 'y' has 101 elements and 'x' 100 at the bench 2 size")
  end)
  it("a buffer passed twice in args is an undeclared in-place launch", function()
    local dir = spec("{}")
    local path = dir .. "/workload.lua"
    local text = assert(io.open(path)):read("a"):gsub('args = { "n", "a", "x", "y", "z" }', 'args = { "n", "a", "x", "y", "z", "y" }')
    local h = assert(io.open(path, "w")); h:write(text); h:close()
    local w, f = workload.load(dir)
    expect(w):is_nil()
    expect(f.message):contains("args[6]: 'y' is passed twice")
  end)
end)
