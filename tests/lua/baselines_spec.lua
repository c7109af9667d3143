-- The baselines (lua/klineage/baselines/) under the orchestrator's loop on
-- emu: forward judges every transform of a step and keeps one; random's
-- choices follow its seed alone; memory retrieves the past task most like
-- the kernel and replays its transforms; llm-only needs a provider, and
-- gates what the LLM answers like any other candidate.
local agent = require "klineage.agent"
local context = require "klineage.context"
local files = require "klineage.files"
local journal = require "klineage.journal"
local llm = require "klineage.llm"
local memory_store = require "klineage.baselines.memory_store"
local workload = require "klineage.workload"

local home = require("kl.host").home
local example = home .. "/examples/optimize"
local w = assert(workload.load(example .. "/workload.lua"))
local input = { source = assert(files.read_text(example .. "/matmul.cu")), label = "matmul.cu" }

local function run(policy, opts, budget)
  local root = scratch_dir()
  local ctx = assert(context.new { backend = "emu", journal = root, run_id = "r", budget = budget or 6, workloads = { w } })
  opts = opts or {}
  opts.policy = policy
  local summary, f = agent.optimize(ctx, w, input, opts)
  ctx:close()
  return summary, f, root .. "/r"
end

local function decisions(dir)
  local out = {}
  for _, r in ipairs(assert(journal.read(dir .. "/journal.jsonl"))) do
    if r.kind == "decision" then out[#out + 1] = r end
  end
  return out
end

local function choices(dir)
  local out = {}
  for _, r in ipairs(decisions(dir)) do out[#out + 1] = r.skill .. "@" .. tostring(r.site) end
  return table.concat(out, " ")
end

describe("the baselines are found by name", function()
  it("loads each, and refuses an unknown one", function()
    for _, name in ipairs(agent.BASELINES) do expect(assert(agent.load_policy(name)).name):equals(name) end
    local p, f = agent.load_policy("forwards")
    expect(p):is_nil()
    expect(f.verdict):equals("bad_input")
  end)
end)

describe("forward", function()
  local summary, _, dir = run("forward", nil, 8)
  it("judges every applicable transform of the first step, and keeps one of them", function()
    local first = {}
    for _, r in ipairs(decisions(dir)) do
      if r.step == 1 and (r.status == "applied" or r.status == "rejected") then first[#first + 1] = r end
    end
    expect(#first):at_least(2)
    local applied = 0
    for _, r in ipairs(first) do
      expect(r.skill):matches("^transform:")
      if r.status == "applied" then applied = applied + 1 end
    end
    expect(applied):equals(1)
    expect(#summary.steps):at_least(1)
  end)
  it("says of an accepted change it did not keep what beat it", function()
    local beaten = 0
    for _, r in ipairs(decisions(dir)) do
      if r.status == "rejected" and r.verdict == "ok" and r.why:find("not kept", 1, true) then beaten = beaten + 1 end
    end
    expect(beaten):at_least(1)
  end)
end)

describe("random", function()
  local _, _, a = run("random", { seed = 1 })
  local _, _, b = run("random", { seed = 1 })
  it("makes the same choices for the same seed", function()
    expect(choices(a)):matches("transform:")
    expect(choices(b)):equals(choices(a))
  end)
  it("makes other choices for another seed", function()
    local differs = false
    for seed = 2, 6 do
      local _, _, c = run("random", { seed = seed }, 3)
      if choices(c) ~= choices(a):sub(1, #choices(c)) then differs = true break end
    end
    expect(differs):is_true()
  end)
end)

describe("memory", function()
  local walks = scratch_dir()
  assert(os.execute(string.format("tar xzf '%s/reports/walks/h200-2026-12-02b.tar.gz' -C '%s'", home, walks)))
  local dirs = {}
  for _, name in ipairs({ "sgemm", "transpose", "softmax" }) do
    dirs[#dirs + 1] = walks .. "/h200-2026-12-02/walk-" .. name .. "-recorded-cuda"
  end
  local observations = require("klineage.skills.extract").folders(dirs)
  local sgemm = assert(workload.load("sgemm"))
  local v0 = assert(files.read_text(sgemm.dir .. "/" .. sgemm.lineage[1]))

  it("builds one forward trajectory per lineage, v0 first", function()
    local store = memory_store.build(observations)
    expect(#store):equals(3)
    local entry
    for _, e in ipairs(store) do if e.task == "sgemm" then entry = e end end
    expect(entry.transforms[1]):equals("coalesce")
    expect(#entry.transforms):at_least(3)
  end)
  it("retrieves sgemm for sgemm's v0, and another task when sgemm is left out", function()
    expect(memory_store.retrieve(memory_store.build(observations), v0, {}).task):equals("sgemm")
    local others = {}
    for _, o in ipairs(observations) do if o.lineage ~= "sgemm" then others[#others + 1] = o end end
    local e = memory_store.retrieve(memory_store.build(others), v0, {})
    expect(e.task):exists()
    if e.task == "sgemm" then fail("sgemm was left out of the store, and retrieved") end
  end)
  it("replays the retrieved trajectory on a kernel, and says whose", function()
    local _, _, dir = run("memory", { memory = observations })
    local ds = decisions(dir)
    expect(#ds):at_least(1)
    expect(ds[1].because[1]):matches("trajectory")
  end)
end)

describe("llm-only", function()
  it("does not run without a provider, and says so before any cycle", function()
    local s, f = run("llm-only")
    expect(s):is_nil()
    expect(f.verdict):equals("llm_unavailable")
    expect(f.message):contains("no provider")
  end)
  it("gates the LLM's answer like any other candidate", function()
    local path = scratch_file("```cuda\n" .. input.source:gsub("threadIdx%.x", "threadIdx.x + 0") .. "\n```\n", ".md")
    local seam = llm.seam(assert(llm.from_config({ provider = "command", model = "file", command = { "/bin/cat", path } })))
    local s, _, dir = run("llm-only", { llm = seam }, 4)
    expect(s):exists()
    local ds = decisions(dir)
    expect(ds[1].skill):equals("llm:optimize")
    expect(ds[1].by):equals("llm")
    expect(ds[1].verdict):equals("ok")
  end)
end)
