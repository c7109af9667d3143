-- The run context, its budget, its journal and resume, and who the gate
-- blames when something other than the candidate fails: on the fake worker
-- (a real child process, kernels in Lua).
local context = require "klineage.device.context"
local gate = require "klineage.gate"
local journal = require "klineage.store.journal"
local runs = require "klineage.store.runs"
local workload = require "klineage.workload"
local pool_mod = require "klineage.device.worker.pool"
local hash = require "kl.hash"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local fixture = here .. "/../fixtures/workloads/saxpy"
local v0 = fixture .. "/v0.cu"

local function tmpdir()
  local d = os.tmpname()
  os.remove(d)
  assert(os.execute("mkdir -p '" .. d .. "'"))
  return d
end

local function read(path) local h = assert(io.open(path, "rb")) local s = h:read("a") h:close() return s end

-- A copy of v0 under another entry name: the fake worker runs its kernels by name.
local function as_kernel(name)
  return (read(v0):gsub("void saxpy%(", "void " .. name .. "("))
end

local function of_kind(records, kind)
  local out = {}
  for _, r in ipairs(records) do if r.kind == kind then out[#out + 1] = r end end
  return out
end

describe("the run context", function()
  local w = assert(workload.load(fixture))

  it("refuses an unknown backend and a budget that is not a count", function()
    local ctx, f = context.new { backend = "bogus", journal = false }
    expect(ctx):is_nil()
    expect(f.verdict):equals("bad_input")
    expect(f.message):contains("unknown backend 'bogus'")
    ctx, f = context.new { backend = "fake", journal = false, budget = -1 }
    expect(ctx):is_nil()
    expect(f.verdict):equals("bad_input")
  end)

  it("holds the pool's timeout: a hanging kernel times out in the pool's time, not a default", function()
    local pool = assert(pool_mod.new { backend = "fake", timeout = 1 })
    local ctx = assert(context.new { pool = pool, journal = false })
    local t0 = require("kl.host").clock()
    local r = gate.evaluate(ctx, { source = as_kernel("hang"), file = "hang.cu", kernel = "hang" }, w, { profile = false })
    expect(r.verdict):equals("timeout")
    expect(require("kl.host").clock() - t0):at_most(30)
    ctx:close()
    pool:close()
  end)

  it("writes a self-sufficient journal: run record, texts by hash, baseline, spec, seeds, options, provenance", function()
    local root = tmpdir()
    local ctx = assert(context.new { backend = "fake", journal = root, command = { "test", "run" }, workloads = { w } })
    local r = gate.evaluate(ctx, { file = v0, provenance = { parent = "abc", producer = { kind = "transform", name = "unroll", params = { n = 4 } } } },
      w, { seeds = { 5, 6 }, max_seconds = 0.05 })
    expect(r.verdict):equals("ok")
    local dir = ctx.run.dir
    ctx:close()
    local recs = assert(journal.read(dir .. "/journal.jsonl"))
    expect(recs[1].kind):equals("run")
    expect(recs[1].command):equals({ "test", "run" })
    expect(recs[1].backend):equals("fake")
    expect(recs[1].arch):equals("sm_90")
    expect(recs[1].specs[1].sha256):equals(w.sha256)
    expect(recs[1].versions.klineage):exists()
    local e = of_kind(recs, "evaluation")[1]
    expect(e.candidate.sha256):equals(hash.sha256(read(v0)))
    expect(read(dir .. "/" .. e.candidate.source)):equals(read(v0))
    expect(e.baseline.label):equals("v0.cu")
    expect(read(dir .. "/" .. e.baseline.source)):equals(read(v0))
    expect(e.workload.sha256):equals(w.sha256)
    expect(e.options.seeds):equals({ 5, 6 })
    expect(e.options.sizes):equals("all")
    expect(e.provenance.producer.name):equals("unroll")
    expect(e.provenance.parent):equals("abc")
    expect(e.key):matches("^%x+$")
    expect(e.charged):is_true()
  end)

  it("resumes a run: a judged candidate comes from the journal, uncharged; new options are a new judgement", function()
    local root = tmpdir()
    local ctx = assert(context.new { backend = "fake", journal = root, budget = 3 })
    local first = gate.evaluate(ctx, { file = v0 }, w, { max_seconds = 0.05 })
    expect(first.verdict):equals("ok")
    local id = ctx.run.id
    ctx:close()
    local again = assert(context.new { backend = "fake", journal = root, resume = id, budget = 3 })
    expect((again:spent())):equals(1)
    local r = gate.evaluate(again, { file = v0 }, w, { max_seconds = 0.05 })
    expect(r.reused):is_true()
    expect(r.key):equals(first.key)
    expect((again:spent())):equals(1)
    local other = gate.evaluate(again, { file = v0 }, w, { max_seconds = 0.05, seeds = { 9 } })
    expect(other.reused):is_nil()
    expect((again:spent())):equals(2)
    local dir = again.run.dir
    again:close()
    local recs = assert(journal.read(dir .. "/journal.jsonl"))
    expect(#of_kind(recs, "evaluation")):equals(2)
    expect(#of_kind(recs, "resume")):equals(1)
  end)

  it("finds a run by id under the root, or by its folder, and says when there is none", function()
    local root = tmpdir()
    local run = assert(runs.create(root, "r1"))
    run:close()
    expect(runs.find("r1", root)):equals(root .. "/r1")
    expect(runs.find(root .. "/r1/", root)):equals(root .. "/r1")
    local none, f = runs.find("nope", root)
    expect(none):is_nil()
    expect(f.message):contains("no run 'nope'")
  end)

  it("never takes a run folder already there: a named one is refused, a drawn one drawn again", function()
    local root = tmpdir()
    local run = assert(runs.create(root, "r1"))
    run:close()
    local again, f = runs.create(root, "r1")
    expect(again):is_nil()
    expect(f.verdict):equals("bad_input")
    expect(f.message):contains("already in")
    -- Every name this clock second could draw taken but one: a draw lands on a free one.
    local real = journal.new_run_id
    local n = 0
    journal.new_run_id = function() n = n + 1; return n < 4 and "r1" or "r2" end
    local drawn = runs.create(root)
    journal.new_run_id = real
    expect(drawn and drawn.id):equals("r2")
    drawn:close()
  end)

  it("draws other run names in processes started at once, with address randomization off", function()
    -- Lua seeds its generator from the time and an address; CI sandboxes
    -- without ASLR gave two commands of one second the same run id.
    local script = tmpdir() .. "/draw.lua"
    local h = assert(io.open(script, "w"))
    h:write("print(require('klineage.store.journal').new_run_id())\n")
    h:close()
    -- (where a sandbox refuses the personality call, the draws run as they are)
    local off = os.execute("setarch -R true >/dev/null 2>&1") and "setarch -R " or ""
    local cmd = string.format("%s%s run %s 2>&1", off, require("kl.host").executable(), script)
    local ids = {}
    for i = 1, 3 do
      local p = io.popen(cmd)
      ids[i] = p:read("a")
      p:close()
      expect(ids[i]):matches("^%d+%-%d+%-%x+\n$")
    end
    expect(ids[1] ~= ids[2] or ids[2] ~= ids[3]):is_true()
  end)

  it("gives canonical keys: the same table in any key order has the same key", function()
    expect(runs.key({ a = 1, b = { 2, 3 }, c = { x = 1.5 } })):equals(runs.key({ c = { x = 1.5 }, b = { 2, 3 }, a = 1 }))
    expect(runs.key({ a = 1 }) ~= runs.key({ a = 2 })):is_true()
  end)
end)

describe("the gate blames whoever was at fault", function()
  local w = assert(workload.load(fixture))

  it("a worker killed from outside costs the kernel nothing: the trial is run again", function()
    local flag = os.tmpname()
    os.remove(flag)
    local pool = assert(pool_mod.new { backend = "fake", timeout = 30, env = { KLINEAGE_FAKE_KILLED_ONCE = flag } })
    local ctx = assert(context.new { pool = pool, journal = false })
    local r = gate.evaluate(ctx, { source = as_kernel("saxpy_killed_once"), file = "k.cu", kernel = "saxpy_killed_once" }, w,
      { profile = false })
    expect(r.verdict):equals("ok")
    expect(#r.stages.correct.retried):equals(1)
    expect(r.stages.correct.retried[1].verdict):equals("worker_lost")
    os.remove(flag)
    ctx:close()
    pool:close()
  end)

  it("a kernel that faults every time is a fault, after one retry", function()
    local pool = assert(pool_mod.new { backend = "fake", timeout = 30 })
    local ctx = assert(context.new { pool = pool, journal = false })
    local r = gate.evaluate(ctx, { source = as_kernel("fault"), file = "f.cu", kernel = "fault" }, w, { profile = false })
    expect(r.verdict):equals("fault")
    expect(r.blame):equals("candidate")
    expect(#r.stages.correct.retried):equals(1)
    ctx:close()
    pool:close()
  end)

  it("a baseline that faults is baseline_broken, not the candidate's fault", function()
    local pool = assert(pool_mod.new { backend = "fake", timeout = 30 })
    local ctx = assert(context.new { pool = pool, journal = false })
    local r = gate.evaluate(ctx, { file = v0 }, w,
      { profile = false, baseline = { source = as_kernel("fault"), file = "base.cu", kernel = "fault" } })
    expect(r.verdict):equals("baseline_broken")
    expect(r.blame):equals("baseline")
    expect(r.stages.correct.message):contains("the baseline (base.cu) failed: fault")
    ctx:close()
    pool:close()
  end)
end)
