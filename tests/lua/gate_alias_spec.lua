-- In-place launches (klineage.workload.alias) on emu: a spec that declares
-- alias = { { "y", "x" } } has every test size judged in place too, the
-- baseline and the C reference run the same way
-- (tests/adversarial/alias/README.md lists the kernels and verdicts).
local gate = require "klineage.gate"
local kernel = require "klineage.gate.kernel"
local session = require "klineage.gate.session"
local verdicts = require "klineage.base.verdicts"
local workload = require "klineage.workload"
local alias = require "klineage.workload.alias"
local pool_mod = require "klineage.device.worker.pool"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local dir = here .. "/../adversarial/alias"

-- w as if its spec said alias = {} (the same kernels, never in place)
local function never_in_place(w)
  local c = {}
  for k, v in pairs(w) do c[k] = v end
  c.alias_pairs, c.sha256 = {}, w.sha256 .. "|never"
  return c
end

describe("gate on emu: kernels launched in place", function()
  local pool = assert(pool_mod.new { backend = "emu", timeout = 120 })
  local ctx = assert(require("klineage.device.context").new { journal = false, pool = pool })
  local w = assert(workload.load(dir))

  it("passes v0, judging each test size and seed out of place and in place", function()
    local r = gate.evaluate(ctx, { file = dir .. "/v0.cu" }, w)
    expect(r.verdict):equals("ok")
    local in_place, out_of_place = 0, 0
    for _, t in ipairs(r.stages.correct.trials) do
      if t.in_place then in_place = in_place + 1 else out_of_place = out_of_place + 1 end
    end
    expect(in_place > 0):is_true()
    expect(in_place):equals(out_of_place)
    expect(r.stages.reference.verdict):equals("ok")
    expect(r.stages.reference.trials):equals(2 * 2 * #r.stages.reference.seeds)
  end)

  it("rejects a kernel that is right out of place and wrong in place", function()
    local r = gate.evaluate(ctx, { file = dir .. "/reread.cu" }, w)
    expect(r.verdict):equals("wrong")
    expect(r.stages.correct.message):contains("in place (y = x): y: ")
    expect(r.stages.correct.at.in_place):equals("in place (y = x)")
  end)

  it("passes the same kernel when the spec says it is never launched in place", function()
    local r = gate.evaluate(ctx, { file = dir .. "/reread.cu" }, never_in_place(w))
    expect(r.verdict):equals("ok")
  end)

  it("gives that kernel as the baseline baseline_broken: the C reference runs in place too", function()
    local r = gate.evaluate(ctx, { file = dir .. "/v0.cu", label = "cand" }, w, { baseline = { file = dir .. "/reread.cu" } })
    expect(r.verdict):equals("baseline_broken")
    expect(r.stages.reference.cause):equals("wrong")
    expect(r.stages.reference.at.in_place):equals("in place (y = x)")
    expect(r.stages.reference.message):contains("in place (y = x)")
  end)

  it("binds both arguments to the one buffer in an in-place launch", function()
    local k = assert(kernel.prepare({ file = dir .. "/v0.cu" }, w, ctx.arch))
    local s = session.new { pool = pool }
    local p = workload.sizes(w)[1].params
    local req = s:launch_request(k, alias.in_place(w), p)
    expect(req.args[3]):equals({ "buf", "y" })
    expect(req.args[4]):equals({ "buf", "y" })
    local apart = s:launch_request(k, w, p)
    expect(apart.args[3]):equals({ "buf", "x" })
  end)
  ctx:close(); pool:close()
end)

describe("gate: a run that binds one buffer to two pointers the spec keeps apart", function()
  local pool = assert(pool_mod.new { backend = "fake", timeout = 30 })
  local ctx = assert(require("klineage.device.context").new { journal = false, pool = pool })
  local saxpy = here .. "/../fixtures/workloads/saxpy"
  it("is bad_input naming both arguments", function()
    local w = assert(workload.load(saxpy))
    w.run = function(c) c:launch({ x = "y" }) end
    local k = assert(kernel.prepare({ file = saxpy .. "/v0.cu" }, w, ctx.arch))
    local s = session.new { pool = pool }
    local p = workload.sizes(w)[1].params
    s:load(k)
    s:alloc(w, p)
    local ok, f = verdicts.catch(s.run, s, k, w, p)
    expect(ok):is_nil()
    expect(f.verdict):equals("bad_input")
    expect(f.message):contains("run: ctx:launch binds x and y to one buffer 'y', which the spec's alias does not declare")
  end)
  ctx:close(); pool:close()
end)
