-- Probes (klineage.skills.probe): the skills applied forward where the walks
-- did not judge them. What CI can check with no GPU: the plan, forward
-- probes gated on emu (correct, not timed) and resumed without a second
-- judgement, size probes refused where nothing is timed, the compare's
-- refusal of a size a kernel's @kl requires rules out, and extraction of
-- probe records (a size probe's facts at its own size, a failed forward
-- probe as a failure). The timed probes ran on the H200: their journals are
-- reports/probes/, and skills_shipped_spec holds the skills learned from them.
local context = require "klineage.device.context"
local extract = require "klineage.skills.extract"
local files = require "klineage.base.files"
local gate = require "klineage.gate"
local journal = require "klineage.store.journal"
local learn = require "klineage.skills.learn"
local match = require "klineage.skills.match"
local probe = require "klineage.skills.probe"
local workload = require "klineage.workload"
local hash = require "kl.hash"

local function version_sha(w, file) return hash.sha256(assert(files.read_text(w.dir .. "/" .. file))) end

local function probes_of(dir)
  local out = {}
  for _, r in ipairs(assert(journal.read(dir .. "/journal.jsonl"))) do
    if r.kind == "probe" then out[#out + 1] = r end
  end
  return out
end

describe("probe.plan", function()
  local sgemm = assert(workload.load("sgemm"))

  it("puts each transform at its first apply site in every lineage version, in a fixed order", function()
    local units = probe.plan(sgemm, { kinds = { forward = true } })
    local seen, names = {}, {}
    for _, u in ipairs(units) do
      expect(u.probe):equals("forward")
      local id = u.label .. "|" .. u.site.transform
      if seen[id] then fail("two units for %s", id) end
      seen[id] = true
      names[#names + 1] = id
    end
    expect(seen["v1_coalesced.cu|smem_tiling"]):equals(true)
    expect(seen["v3_blocktile_1d.cu|register_blocking"]):equals(true)
    local again = probe.plan(sgemm, { kinds = { forward = true } })
    for i, u in ipairs(again) do expect(u.label .. "|" .. u.site.transform):equals(names[i]) end
  end)

  it("times a recorded step at every bench size but the walks' own, and names the size by what differs", function()
    local step = { from = version_sha(sgemm, "v4_blocktile_2d.cu"), to = version_sha(sgemm, "v3_blocktile_1d.cu") }
    local units = probe.plan(sgemm, { kinds = { size = true }, steps = { step } })
    expect(#units):equals(1) -- sgemm has one other bench size, 1024^3
    expect(units[1].size_label):equals("bench 2 (K=1024, M=1024, N=1024)")
    expect(units[1].size.params.M):equals(1024)
    -- a step between kernels that are not lineage versions is not a recorded step
    expect(#probe.plan(sgemm, { kinds = { size = true }, steps = { { from = "x", to = "y" } } })):equals(0)
  end)
end)

describe("probe.run on emu", function()
  local w = assert(workload.load("transpose"))
  local root = scratch_dir()

  it("gates forward probes against the lineage's first version and journals each, not timed", function()
    local ctx = assert(context.new { backend = "emu", journal = root, run_id = "p", workloads = { w } })
    local units = probe.plan(w, { kinds = { forward = true } })
    local first = { units[1], units[2], units[3] }
    local s = probe.run(ctx, w, first)
    ctx:close()
    expect(s.judged):equals(3)
    expect(s.stopped):equals("done")
    local records = probes_of(root .. "/p")
    expect(#records):equals(3)
    for _, r in ipairs(records) do
      expect(r.probe):equals("forward")
      expect(r.verdict):equals("ok")
      expect(r.effect.measured):equals(false)
      expect(r.producer.kind):equals("transform")
      expect(r.labels.to):equals("v0_naive.cu")
      expect(files.read_text(root .. "/p/" .. r.source)):contains("transpose")
    end
  end)

  it("resumes: what the journal holds is not judged again, and no cycle is charged for it", function()
    local ctx = assert(context.new { backend = "emu", journal = root, resume = "p", workloads = { w } })
    local used0 = ctx:spent()
    local units = probe.plan(w, { kinds = { forward = true } })
    local s = probe.run(ctx, w, { units[1], units[2], units[3] })
    expect(s.judged):equals(0)
    expect(s.reused):equals(3)
    expect((ctx:spent())):equals(used0)
    ctx:close()
  end)

  it("stops at the budget without journaling a probe it could not judge whole", function()
    local ctx = assert(context.new { backend = "emu", journal = root, run_id = "b", budget = 2, workloads = { w } })
    local s = probe.run(ctx, w, probe.plan(w, { kinds = { forward = true } }))
    ctx:close()
    expect(s.stopped):equals("budget_exhausted")
    expect(#probes_of(root .. "/b")):equals(2)
  end)

  it("refuses size probes where nothing is timed, and says why", function()
    local ctx = assert(context.new { backend = "emu", journal = false })
    local step = { from = version_sha(w, "v1_smem_tile.cu"), to = version_sha(w, "v0_naive.cu") }
    local s = probe.run(ctx, w, probe.plan(w, { kinds = { size = true }, steps = { step } }))
    ctx:close()
    expect(s.judged):equals(0)
    expect(#s.not_run):equals(1)
    expect(s.not_run[1].why):contains("times nothing")
  end)
end)

describe("gate.compare at other sizes", function()
  it("refuses, charging nothing, a size a kernel's @kl requires rules out", function()
    local w = assert(workload.load("sgemm"))
    local ctx = assert(context.new { backend = "emu", journal = false, budget = 5 })
    local a = { file = w.dir .. "/v2_smem_tiles.cu", label = "v2", kernel = w.kernel }
    local b = { file = w.dir .. "/v3_blocktile_1d.cu", label = "v3", kernel = w.kernel }
    local c, f = gate.compare(ctx, a, b, w, { params = { M = 67, N = 45, K = 33 } })
    expect(c):is_nil()
    expect(f.verdict):equals("not_allowed")
    expect(f.message):contains("v3")
    expect((ctx:spent())):equals(0)
    ctx:close()
  end)
end)

describe("extract reads probes", function()
  local w = assert(workload.load("transpose"))
  local root = scratch_dir()
  local ctx = assert(context.new { backend = "emu", journal = root, run_id = "x", workloads = { w } })
  local v0 = assert(files.read_text(w.dir .. "/v0_naive.cu"))
  local v1 = assert(files.read_text(w.dir .. "/v1_smem_tile.cu"))
  -- As a cuda probe run journals them (JSON brings integral sizes back as floats).
  ctx:record({ kind = "probe", key = "size-1", probe = "size", from = hash.sha256(v1), to = hash.sha256(v0),
               labels = { from = "v1_smem_tile.cu", to = "v0_naive.cu" }, producer = { kind = "recorded", name = "v1_smem_tile.cu" },
               verdict = "ok", size = "bench 2 (cols=2048, rows=2048)", params = { rows = 2048.0, cols = 2048.0 },
               effect = { measured = true, speedup = 0.8, ci = { 0.79, 0.81 }, outcome = "slower" },
               source = ctx:store_source(v1) })
  local broken = v0:gsub("out%[", "out[1 + ", 1)
  ctx:record({ kind = "probe", key = "fwd-1", probe = "forward", from = hash.sha256(broken), to = hash.sha256(v0),
               labels = { from = "v0_naive.cu + coalesce", to = "v0_naive.cu" },
               producer = { kind = "transform", name = "coalesce", edit = "transpose:c,r", direction = "apply" },
               verdict = "wrong", source = ctx:store_source(broken) })
  ctx:close()
  local obs, problems = extract.folders({ root .. "/x" })

  it("gives a size probe the facts at its own size, named like the walk's step", function()
    expect(#problems):equals(0)
    local o
    for _, x in ipairs(obs) do if x.evidence.key == "size-1" then o = x end end
    if not o then fail("no observation of the size probe") end
    expect(o.evidence.kind):equals("probe")
    expect(o.size):equals("bench 2 (cols=2048, rows=2048)")
    expect(o.facts["size.rows"]):equals(2048)
    expect(o.outcome):equals("hurt")
    expect(o.skill):equals("template-transpose-v1_smem_tile")
  end)

  it("counts a forward probe the gate refused as a failure of that transform", function()
    local o
    for _, x in ipairs(obs) do if x.evidence.key == "fwd-1" then o = x end end
    if not o then fail("no observation of the forward probe") end
    expect(o.skill):equals("coalesce")
    expect(o.outcome):equals("rejected")
    expect(o.verdict):equals("wrong")
  end)

  it("blocks a skill that never helped by its evidence, in admits and in match", function()
    local fwd
    for _, x in ipairs(obs) do if x.evidence.key == "fwd-1" then fwd = x end end
    local r = learn.skill("coalesce", { fwd })
    expect(r.confidence.supporting):equals(0)
    expect(require("klineage.skills.record").never_helped(r)):equals(true)
    local ok, c, kind = learn.admits(r, {})
    expect(ok):equals(false)
    expect(c):is_nil()
    expect(kind):equals("evidence")
    local rows = assert(match.kernel({ r }, v0, { workload = w }))
    if #rows == 0 then fail("coalesce found no apply site in v0") end
    expect(rows[1].status):equals("blocked")
    expect(rows[1].blocked_by.kind):equals("evidence")
    expect(rows[1].blocked_by.text):contains("never seen to help")
  end)
end)
