-- The baseline's outputs kept on disk (gate/baseline_store.lua): a second
-- process judging against the same baseline takes them from there instead
-- of running the baseline again, and nothing but the entry of that very
-- baseline, size and seed, whole, is ever taken: a corrupt entry, or
-- another key's entry planted in its place (here the outputs of a wrong
-- kernel, which the wrong candidate would match), is a miss, the baseline
-- runs again, and the candidate is judged on what it computes.
local gate = require "klineage.gate"
local store = require "klineage.gate.baseline_store"
local emu = require "klineage.device.emu"
local workload = require "klineage.workload"
local context = require "klineage.device.context"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local w = assert(workload.load(here .. "/../fixtures/workloads/saxpy"))
local v0 = w.dir .. "/v0.cu"
local wrong = here .. "/../adversarial/skip_half.cu" -- writes half of y: "wrong"

-- A fresh context (its own worker process) keeping baseline outputs in dir.
local function new_ctx(dir)
  return assert(context.new { backend = "emu", journal = false, timeout = 120, baseline_store = dir })
end

-- How the trials of a correctness stage got the baseline's outputs, by seed
-- kind: { fixed = { how = n }, drawn = { how = n } }.
local function hows(record)
  local out = { fixed = {}, drawn = {} }
  for _, t in ipairs(record.stages.correct.trials) do
    local kind = t.seed >= 1000 and "drawn" or "fixed" -- gate.evaluate draws seeds from 1000 up
    out[kind][t.baseline] = (out[kind][t.baseline] or 0) + 1
  end
  return out
end

-- The store's key for file's outputs at the spec's test size i and seed, as
-- the gate's session makes it.
local function key_of(file, i, seed)
  local built = assert(emu.build(read_file(file), { name = file }))
  local size = workload.sizes(w)[i]
  local counts = assert(workload.counts(w, size.params))
  return store.key { build = built.key, entry = w.kernel, spec = w.sha256, params = size.params, seed = seed,
                     outputs = { { name = "y", type = "f32", count = counts.y } } }
end

local function evaluate(ctx, cand, base, random_seeds)
  return gate.evaluate(ctx, { file = cand }, w, { baseline = { file = base }, random_seeds = random_seeds })
end

describe("the baseline's outputs on disk", function()
  local dir = scratch_dir() .. "/outputs"

  it("are stored for the fixed seeds by the first process and used by the next", function()
    local ctx = new_ctx(dir)
    local first = evaluate(ctx, v0, v0)
    ctx:close()
    expect(first.verdict):equals("ok")
    expect(hows(first)):equals({ fixed = { ran = 6 }, drawn = { ran = 2 } })
    for i = 1, 2 do
      for seed = 1, 3 do expect(store.lookup(dir, 1, key_of(v0, i, seed), { "y" })):is_a("table") end
    end
    local again = new_ctx(dir)
    local second = evaluate(again, v0, v0)
    again:close()
    expect(second.verdict):equals("ok")
    -- the drawn seeds are new each time: never stored, always run
    expect(hows(second)):equals({ fixed = { stored = 6 }, drawn = { ran = 2 } })
  end)

  it("are not trusted when an entry's bytes no longer match its hash", function()
    local path = store.path(dir, key_of(v0, 2, 1))
    local text = read_file(path)
    write_file(path, text:sub(1, -2) .. string.char((text:byte(-1) + 1) % 256))
    local ok, why = store.lookup(dir, 1, key_of(v0, 2, 1), { "y" })
    expect(ok):is_false()
    expect(why):contains("does not match its hash")
    local ctx = new_ctx(dir)
    local r = evaluate(ctx, v0, v0)
    ctx:close()
    expect(r.verdict):equals("ok")
    expect(hows(r).fixed):equals({ stored = 5, ran = 1 })
    -- the run replaced the entry
    expect(store.lookup(dir, 1, key_of(v0, 2, 1), { "y" })):is_a("table")
  end)

  it("are not trusted from another key's entry: a wrong kernel's outputs planted for v0 do not pass it", function()
    -- the wrong kernel judged as its own baseline stores its outputs
    local ctx = new_ctx(dir)
    expect(evaluate(ctx, wrong, wrong).verdict):equals("ok")
    ctx:close()
    -- each of them copied over v0's entry of the same size and seed: whole,
    -- hashed right, and exactly what the wrong candidate computes
    for i = 1, 2 do
      for seed = 1, 3 do
        write_file(store.path(dir, key_of(v0, i, seed)), read_file(store.path(dir, key_of(wrong, i, seed))))
      end
    end
    local ok, why = store.lookup(dir, 1, key_of(v0, 1, 1), { "y" })
    expect(ok):is_false()
    expect(why):contains("foreign")
    -- no seed drawn at random, whose baseline runs anyway: the fixed
    -- seeds alone must find the candidate wrong
    local judged = new_ctx(dir)
    local r = evaluate(judged, wrong, v0, 0)
    judged:close()
    expect(r.verdict):equals("wrong")
    expect(r.stages.correct.trials[1].baseline):equals("ran")
  end)

  it("are kept nowhere when the context says so, and never on a backend that runs no host code", function()
    local none = scratch_dir() .. "/none"
    local ctx = new_ctx(false)
    expect(store.of_context(ctx)):is_nil()
    ctx:close()
    expect(store.of_context({ backend = "fake", baseline_store = none })):is_nil()
    expect(store.of_context({ backend = "emu", baseline_store = none })):equals({ dir = none, owned = 1 })
  end)
end)

describe("baseline_store.lookup", function()
  local dir = scratch_dir() .. "/outputs"
  local key = string.rep("ab", 32)

  it("gives back what save stored, and says why it gives nothing", function()
    expect(select(2, store.lookup(dir, 1, key, { "y" }))):equals("absent")
    assert(store.save(dir, 1, key, { { name = "y", bytes = "\1\2\3\4" }, { name = "z", bytes = "" } }))
    expect(store.lookup(dir, 1, key, { "y", "z" })):equals({ y = "\1\2\3\4", z = "" })
    expect(select(2, store.lookup(dir, 1, key, { "y" }))):equals("foreign: other outputs")
    expect(select(2, store.lookup(dir, 1, key, { "z", "y" }))):equals("foreign: other outputs")
    local text = read_file(store.path(dir, key))
    write_file(store.path(dir, key), text .. "x")
    expect(select(2, store.lookup(dir, 1, key, { "y", "z" }))):equals("torn: bytes past the outputs")
    write_file(store.path(dir, key), "not json\n")
    expect(select(2, store.lookup(dir, 1, key, { "y", "z" }))):equals("torn: no header")
    local at = assert(text:find(store.SCHEMA, 1, true))
    write_file(store.path(dir, key), text:sub(1, at - 1) .. "another-schema" .. text:sub(at + #store.SCHEMA))
    expect(select(2, store.lookup(dir, 1, key, { "y", "z" }))):contains("foreign: schema")
  end)

  it("misses a file that others can write, and refuses a folder others can write", function()
    assert(store.save(dir, 1, key, { { name = "y", bytes = "\1\2\3\4" } }))
    assert(os.execute("chmod 666 '" .. store.path(dir, key) .. "'"))
    local ok, why = store.lookup(dir, 1, key, { "y" })
    expect(ok):is_false()
    expect(why):contains("loose")
    assert(os.execute("chmod 777 '" .. dir .. "'"))
    local refused, f = store.lookup(dir, 1, key, { "y" })
    expect(refused):is_nil()
    expect(f.verdict):equals("io_error")
  end)
end)
