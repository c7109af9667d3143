-- The baselines (search/policies/: forward, random, memory, llm-only)
-- under the session loop on emu: forward judges every transform of a step
-- and keeps one; random's choices follow its seed alone; memory retrieves
-- the past task most like the kernel and replays its transforms; llm-only
-- needs a provider, and gates what the LLM answers like any other
-- candidate, each call charged.
local context = require "klineage.device.context"
local files = require "klineage.base.files"
local journal = require "klineage.store.journal"
local llm = require "klineage.llm"
local memory_store = require "klineage.search.memory_store"
local search = require "klineage.search"
local workload = require "klineage.workload"

local home = require("kl.host").home
local example = home .. "/examples/optimize"
local w = assert(workload.load(example .. "/workload.lua"))
local input = { source = assert(files.read_text(example .. "/matmul.cu")), label = "matmul.cu" }

local function run(policy, opts, budget)
  local root = scratch_dir()
  local ctx = assert(context.new { backend = "emu", journal = root, run_id = "r", budget = budget or 6, workloads = { w } })
  opts = opts or {}
  opts.policy, opts.input, opts.direction = policy, input, "forward"
  local summary, f = search.run(ctx, w, opts)
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
  it("loads each from its folder, and refuses an unknown one", function()
    local forward = search.policies("forward")
    for _, name in ipairs({ "forward", "random", "memory", "llm-only" }) do
      expect(assert(search.load_policy(name, "forward")).name):equals(name)
      expect(table.concat(forward, ",")):contains(name)
    end
    local p, f = search.load_policy("forwards")
    expect(p):is_nil()
    expect(f.verdict):equals("bad_input")
  end)
end)

describe("forward", function()
  local summary, _, dir = run("forward", nil, 8)
  it("judges every applicable transform and the best predicted schedules of the first step, and keeps one of them", function()
    local first = {}
    for _, r in ipairs(decisions(dir)) do
      if r.step == 1 and (r.status == "applied" or r.status == "rejected") then first[#first + 1] = r end
    end
    expect(#first):at_least(2)
    local applied = 0
    for _, r in ipairs(first) do
      if not (r.skill:match("^transform:") or r.skill:match("^schedule:")) then fail("not a transform nor a schedule: " .. r.skill) end
      if r.status == "applied" then applied = applied + 1 end
    end
    expect(applied):equals(1)
    expect(#summary.steps):at_least(1)
  end)
  it("says of an accepted change it did not keep what beat it", function()
    local beaten = 0
    for _, r in ipairs(decisions(dir)) do
      if r.status == "rejected" and r.verdict == "ok" and r.why:find("not kept", 1, true) then
        beaten = beaten + 1
        -- emu times nothing: what was kept was accepted first, it did not "do better".
        expect(r.why):contains("emu times nothing")
      end
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
  it("says its seed in every decision and at the end of the run", function()
    for _, d in ipairs(decisions(a)) do expect(d.because[1]):contains("seed 1") end
    local last
    for _, r in ipairs(assert(journal.read(a .. "/journal.jsonl"))) do if r.kind == "optimize_end" then last = r end end
    expect(last.policy):equals("random")
    expect(last.seed):equals(1)
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
  it("keeps one trajectory per lineage where two walks of it were learned from, the longer", function()
    local extract = require "klineage.skills.extract"
    local breadth = walks .. "/h200-2026-12-02/walk-sgemm-breadth-cuda"
    local one = memory_store.build(extract.folders({ dirs[1] }))[1]
    local other = memory_store.build(extract.folders({ breadth }))[1]
    local two = memory_store.build(extract.folders({ dirs[1], breadth }))
    expect(#two):equals(1)
    expect(#two[1].transforms):equals(math.max(#one.transforms, other and #other.transforms or 0))
  end)
  it("starts the chain at v0 and follows each step's candidate", function()
    local function obs(run, from, to, transform)
      return { lineage = "sgemm", transform = transform, skill = transform or "template-x",
               evidence = { kind = "walk_step", run = run, key = from .. to, from = from, candidate = to } }
    end
    local sha0 = require("kl.hash").sha256(v0)
    -- Out of order, with a template step in the middle and a probe that is not a trajectory.
    local store = memory_store.build({
      obs("w", "b", "c", "vectorize"), obs("w", sha0, "a", "coalesce"), obs("w", "a", "b", nil),
      { lineage = "sgemm", transform = "unroll", skill = "unroll",
        evidence = { kind = "probe", run = "w", key = "p", from = sha0, candidate = "z" } } })
    expect(table.concat(store[1].transforms, " ")):equals("coalesce vectorize")
    -- A second walk that shares the first step and branches off: the longer branch, whole.
    store = memory_store.build({
      obs("w", "b", "c", "vectorize"), obs("w", sha0, "a", "coalesce"), obs("w", "a", "b", nil),
      obs("v", "a", "d", "unroll"), obs("v", "d", "e", "smem_tiling"), obs("v", "e", "f", "double_buffer") })
    expect(table.concat(store[1].transforms, " ")):equals("coalesce unroll smem_tiling double_buffer")
    expect(store[1].walk):equals("w+v")
  end)
  it("retrieves sgemm for sgemm's v0, and another task when sgemm is left out", function()
    expect(memory_store.retrieve(memory_store.build(observations), v0, {}).task):equals("sgemm")
    local others = {}
    for _, o in ipairs(observations) do if o.lineage ~= "sgemm" then others[#others + 1] = o end end
    local e = memory_store.retrieve(memory_store.build(others), v0, {})
    expect(e.task):exists()
    if e.task == "sgemm" then fail("sgemm was left out of the store, and retrieved") end
  end)
  -- sgemm's trajectory alone, so that the matmul example has one that applies.
  local sgemm_only = {}
  for _, o in ipairs(observations) do if o.lineage == "sgemm" then sgemm_only[#sgemm_only + 1] = o end end
  it("replays the retrieved trajectory on a kernel, and says whose", function()
    local _, _, dir = run("memory", { memory = sgemm_only })
    local ds = decisions(dir)
    expect(#ds):at_least(1)
    expect(ds[1].because[1]):matches("trajectory")
  end)
  it("only moves forward: a step of the sequence behind the last kept one is never offered again", function()
    -- A trajectory of transforms that all apply to the example, its first refused (emu keeps
    -- every correct change otherwise): the replay passes it over and never goes back to it.
    local sha0 = require("kl.hash").sha256(v0)
    local function obs(from, to, transform)
      return { lineage = "sgemm", transform = transform, skill = transform, outcome = "helped",
               evidence = { kind = "walk_step", run = "w", key = from, from = from, candidate = to } }
    end
    local memory = require "klineage.search.policies.memory"
    -- restrict's candidate is made wrong, so the gate refuses it
    local refusing = setmetatable({ propose = function(state)
      local rows = memory.propose(state)
      for _, row in ipairs(rows) do
        if row.transform == "restrict" then row.applies, row.source, row.by = nil, state.current.source:gsub("sum %+= ", "sum -= "), "test" end
      end
      return rows
    end }, { __index = memory })
    local _, _, dir = run(refusing, { memory = { obs(sha0, "a", "restrict"), obs("a", "b", "launch_bounds"),
                                                 obs("b", "c", "ldg") } }, 10)
    local seen = {}
    for _, d in ipairs(decisions(dir)) do seen[#seen + 1] = math.tointeger(d.step) .. ":" .. d.skill:gsub("^transform:", "") .. ":" .. d.status end
    expect(table.concat(seen, " ")):equals("1:restrict:rejected 1:launch_bounds:applied 2:ldg:applied")
    expect(decisions(dir)[1].verdict):equals("wrong")
  end)
  it("refuses to run with no memory, before any cycle", function()
    local s, f = run("memory")
    expect(s):is_nil()
    expect(f.verdict):equals("bad_input")
    expect(f.message):contains("--learn-from")
  end)
end)

describe("what a baseline keeps", function()
  local forward = require "klineage.search.forward"
  local correct = { verdict = "ok", record = { stages = {} }, effect = { measured = false, why = "the compare failed: timeout" } }
  local function state(timed) return { timed = timed, ctx = { backend = timed and "cuda" or "emu" } } end
  it("rejects where kernels are timed a correct change whose compare failed", function()
    local ok, why = forward.accept(state(true), { skill = "transform:coalesce" }, correct)
    expect(ok):is_false()
    expect(why):contains("the compare failed")
  end)
  it("keeps where nothing is timed a correct change, and says its speed was not measured", function()
    local ok, why = forward.accept(state(false), { skill = "transform:coalesce" }, { verdict = "ok", effect = { measured = false } })
    expect(ok):is_true()
    expect(why):contains("not measured")
  end)
  it("rejects it where timed for a skill too, whatever the skill's evidence", function()
    local ok = forward.accept(state(true), { record = { effect = { speedup = { median = 3, n = 5 } } } }, correct)
    expect(ok):is_false()
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
    -- every call a cycle, and every gate cycle one
    local calls, gated = 0, 0
    for _, r in ipairs(assert(journal.read(dir .. "/journal.jsonl"))) do
      if r.kind == "llm_call" then
        calls = calls + 1
        expect(r.charged):equals(true)
        expect(r.purpose):equals("optimize")
      elseif r.kind == "evaluation" and r.charged then
        gated = gated + 1
      end
    end
    expect(calls):at_least(1)
    expect(s.cycles):equals(calls + gated)
  end)
end)
