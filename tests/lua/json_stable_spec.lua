-- Every --json prints one text for one input. Lua 5.4 seeds its table
-- hash order per process, so the check runs each command in three
-- separate processes and compares the bytes; within one process the order
-- would repeat and prove nothing. Commands that gate or time a kernel
-- (gate, bench, walk, eval, optimize) print the same encoder's text but
-- measure something different on each run, so they are left to the unit
-- checks of klineage.base.stable_json below.
local json = require "klineage.base.stable_json"
local cjson = require "cjson"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local root = here .. "/../.."
local SOFTMAX = root .. "/gpu/workloads/softmax"
local KERNEL = SOFTMAX .. "/v9_fused_stats.cu"
local RUNS = 3

-- The outputs of RUNS processes of the command; each must exit 0.
local function outputs(...)
  local got = {}
  for i = 1, RUNS do
    local out, code = klineage(...)
    if code ~= 0 then fail("klineage %s: exit %s: %s", table.concat({ ... }, " "), tostring(code), out) end
    got[i] = out
  end
  return got
end

local function first_difference(a, b)
  for i = 1, math.max(#a, #b) do
    if a:sub(i, i) ~= b:sub(i, i) then return i end
  end
end

local function same_bytes(...)
  local got = outputs(...)
  -- A stable empty answer would prove nothing about key order.
  check(#got[1] > 20 and got[1]:find("{", 1, true) ~= nil, "klineage %s printed no JSON object: %s",
    table.concat({ ... }, " "), got[1])
  for i = 2, #got do
    local at = first_difference(got[1], got[i])
    check(at == nil, "klineage %s: run %d differs from run 1 at byte %s:\n  %s\n  %s", table.concat({ ... }, " "),
      i, tostring(at), got[1]:sub((at or 1) - 40, (at or 1) + 40), got[i]:sub((at or 1) - 40, (at or 1) + 40))
  end
  return got[1]
end

describe("every --json is byte-stable across processes", function()
  it("transforms KERNEL --json", function()
    same_bytes("transforms", KERNEL, "--json")
    same_bytes("transforms", root .. "/gpu/workloads/sgemm/v7_double_buffer.cu", "--json", "--direction", "undo")
  end)

  it("transforms KERNEL --json with schedule sites: their parameters and reasons, of each kernel of a file", function()
    local out = same_bytes("transforms", root .. "/gpu/workloads/conv2d/v0_naive.cu", "--json")
    expect(out):contains('"family":"schedule"')
    expect(out):contains('"primitive":"unflatten"')
    out = same_bytes("transforms", root .. "/gpu/workloads/bfs/v0_naive.cu", "--json")
    expect(out):contains('"key":"bfs:map(block=128,x=v)"')
  end)

  it("compile --json (NVRTC, no GPU needed)", function()
    same_bytes("compile", KERNEL, "--json")
  end)

  it("match --json, matches and --rewrite edits", function()
    same_bytes("match", "expf($X)", KERNEL, "--json")
    same_bytes("match", "expf($X)", KERNEL, "--rewrite", "__expf($X)", "--json")
  end)

  it("doctor --json: machine-dependent, yet the same on every run here", function()
    same_bytes("doctor", "--json")
  end)

  it("journal show RUN --json", function()
    local dir = scratch_dir()
    local j = assert(require("klineage.store.journal").open(dir .. "/run-a/journal.jsonl"))
    for i = 1, 4 do
      assert(j:append({ kind = "evaluation", candidate = "v" .. i, verdict = i % 2 == 0 and "ok" or "wrong",
        compile = { registers = 30 + i, smem = 1024 * i, spills = 0, occupancy = 0.5 },
        provenance = { parent = "v" .. (i - 1), transform = "fast_math", params = { N = i, BK = 8 } },
        seeds = { 1, 2, 3 }, time_ms = i * 0.25 }))
    end
    j:close()
    same_bytes("journal", "show", dir .. "/run-a", "--json")
  end)

  it("skills list --json and skills match KERNEL --json", function()
    same_bytes("skills", "list", "--json")
    same_bytes("skills", "match", SOFTMAX .. "/v0_naive.cu", "--workload", SOFTMAX, "--json")
  end)
end)

describe("klineage.base.stable_json", function()
  it("sorts object keys at every depth, whatever order they were set in", function()
    local a, b = {}, {}
    for i = 1, 40 do a["k" .. i] = { x = i, [i % 3 == 0 and "z" or "y"] = true } end
    for i = 40, 1, -1 do b["k" .. i] = { [i % 3 == 0 and "z" or "y"] = true, x = i } end
    expect(json.encode(a)):equals(json.encode(b))
    expect(json.encode({ b = 1, a = { d = 2, c = 3 } })):equals('{"a":{"c":3,"d":2},"b":1}')
  end)

  it("keeps arrays arrays, holes as null, and an empty table as cjson writes it", function()
    expect(json.encode({ 3, "x", { 1 } })):equals('[3,"x",[1]]')
    expect(json.encode({ 1, nil, 3 })):equals("[1,null,3]")
    expect(json.encode({})):equals("{}")
    expect(json.encode({ [1] = "a", [50] = "b" })):equals('{"1":"a","50":"b"}')
  end)

  it("writes integers exactly, floats as cjson, NaN as null, '/' unescaped", function()
    expect(json.encode({ 1 << 60, 0.1, 1 / 3, 2.0 })):equals("[1152921504606846976,0.1,0.33333333333333,2]")
    expect(json.encode({ 0 / 0, math.huge })):equals("[null,null]")
    expect(json.encode({ path = "a/b", q = 'say "x"\n' })):equals('{"path":"a/b","q":"say \\"x\\"\\n"}')
    expect(json.encode("back\\/slash")):equals('"back\\\\/slash"')
  end)

  it("reads back as the value it wrote", function()
    local v = { name = "x", list = { 1, 2.5, "three", false }, nested = { a = { b = { c = "d/e" } } } }
    local back = cjson.decode(json.encode(v))
    expect(back.nested.a.b.c):equals("d/e")
    expect(back.list[2]):equals(2.5)
    expect(back.list[4]):equals(false)
  end)

  it("refuses what JSON has no form for, as cjson does", function()
    expect(function() json.encode({ f = print }) end):raises("")
    expect(function() json.encode({ [true] = 1 }) end):raises("table key must be a string or a number")
    local cycle = {}
    cycle.self = cycle
    expect(function() json.encode(cycle) end):raises("nesting deeper than")
  end)
end)
