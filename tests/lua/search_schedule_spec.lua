-- Schedule rows in the forward search: kir's legal sequences of a lifted
-- kernel, emitted, ranked by the static model with a prediction each; a
-- kernel that does not lift gives none and says why, once.
local files = require "klineage.base.files"
local schedules = require "klineage.search.schedules"
local rank = require "klineage.search.schedule_rank"
local workload = require "klineage.workload"

local home = require("kl.host").home
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local example = home .. "/examples/optimize"
local w = assert(workload.load(example .. "/workload.lua"))
local matmul = assert(files.read_text(example .. "/matmul.cu"))

-- Just what schedules.rows reads of a forward state.
local function fake_state()
  local decided = {}
  return { workload = w, tried = {}, decided = decided,
           decide = function(_, row, _node, fields) decided[#decided + 1] = { row = row, fields = fields } end }
end

describe("schedule rows", function()
  it("come from a liftable kernel, each with its sequence, reasons and a prediction, best predicted first", function()
    local state = fake_state()
    local rows = schedules.rows(state, { source = matmul, sha256 = "m" })
    expect(#rows):at_least(2)
    print(string.format("%d rows; best %s predicted %.2fx: %s", #rows, rows[1].schedule,
      rows[1].predicted.speedup, rows[1].predicted.why))
    for i, r in ipairs(rows) do
      expect(r.skill):contains("schedule:")
      expect(r.by):equals("schedule")
      expect(type(r.source)):equals("string")
      expect(#r.because):at_least(1)
      expect(type(r.predicted.why)):equals("string")
      if i > 1 then
        if rows[i - 1].predicted.speedup < r.predicted.speedup then fail("rows are not ranked by prediction") end
      end
    end
    expect(rank.prior(rows[1])):equals(1)
  end)

  it("are none for a kernel that does not lift, and the reason is journaled once", function()
    local state = fake_state()
    local node = { source = "this is not CUDA {", sha256 = "x" }
    expect(#schedules.rows(state, node)):equals(0)
    expect(#schedules.rows(state, node)):equals(0)
    expect(#state.decided):equals(1)
    expect(state.decided[1].fields.status):equals("skipped")
    expect(state.decided[1].fields.why):contains("does not lift")
  end)
end)

describe("one gate cycle per judged candidate", function()
  it("is charged once for an evaluation and its compare, on a timed (fake) backend", function()
    local gate = require "klineage.gate"
    local pool_mod = require "klineage.device.worker.pool"
    local fixture = here .. "/../fixtures/workloads/saxpy"
    local sw = assert(workload.load(fixture))
    local v0 = assert(files.read_text(fixture .. "/v0.cu"))
    local pool = assert(pool_mod.new { backend = "fake", timeout = 30 })
    local ctx = assert(require("klineage.device.context").new { journal = false, pool = pool, budget = 10 })
    ctx.timed = true -- the fake worker times kernels in Lua; here its times stand for a device's
    local against = { source = v0, label = "v0.cu", kernel = sw.kernel, file = fixture .. "/v0.cu" }
    local N = 3
    for i = 1, N do
      local text = v0 .. "\n// candidate " .. i .. "\n"
      local r = gate.judge(ctx, { source = text, label = "c" .. i, kernel = sw.kernel, file = fixture .. "/c" .. i .. ".cu" },
        sw, { baseline = against, against = against })
      expect(r.verdict):equals("ok")
      expect(r.effect.measured):equals(true)
    end
    expect((ctx:spent())):equals(N)
    ctx:close(); pool:close()
  end)
end)
