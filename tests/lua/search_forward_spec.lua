-- The forward search (klineage.search, klineage optimize) on emu: the
-- example kernel of `make run` optimized with the shipped skills, every
-- decision journaled, the input as the correctness reference, a wrong
-- candidate never kept, the budget held, a resumed run charging nothing
-- twice, and the optimize report regenerated from the journal.
local context = require "klineage.device.context"
local files = require "klineage.base.files"
local journal = require "klineage.store.journal"
local search = require "klineage.search"
local store = require "klineage.skills.store"
local workload = require "klineage.workload"

local home = require("kl.host").home
local example = home .. "/examples/optimize"
local w = assert(workload.load(example .. "/workload.lua"))
local input = { source = assert(files.read_text(example .. "/matmul.cu")), label = "matmul.cu" }
local skills = assert(store.load(home .. "/skills/sm_90"))

local function optimize(ctx, source, opts)
  opts = opts or {}
  opts.input, opts.direction = source, "forward"
  return search.run(ctx, w, opts)
end

-- KL_SEARCH (set by ctest): "sample" (make test) leaves out the slowest
-- cases, written long_it; "rest" (lua/search_forward_rest, label long)
-- runs only those; unset (by hand), every case.
local mode = os.getenv("KL_SEARCH") or "all"
local function long_it(name, fn) if mode ~= "sample" then it(name, fn) end end
local function short_it(name, fn) if mode ~= "rest" then it(name, fn) end end
local function short_describe(name, fn) if mode ~= "rest" then describe(name, fn) end end

local function records_of(dir, kind)
  local out = {}
  for _, r in ipairs(assert(journal.read(dir .. "/journal.jsonl"))) do
    if r.kind == kind then out[#out + 1] = r end
  end
  return out
end

short_describe("the forward search on emu", function()
  local root = scratch_dir()
  local ctx = assert(context.new { backend = "emu", journal = root, run_id = "a", budget = 12, workloads = { w } })
  local summary = assert(optimize(ctx, input, { skills = skills }))
  ctx:close()
  local dir = root .. "/a"

  it("judges the skills the repository admits beside the schedules, and keeps only correct kernels", function()
    expect(#summary.steps):at_least(1)
    local skill_judged
    for _, r in ipairs(records_of(dir, "decision")) do
      if r.skill and not r.skill:match("^schedule") and (r.status == "applied" or r.status == "rejected") then skill_judged = r.skill end
    end
    if not skill_judged then fail("no skill of the repository was judged") end
    if summary.final.source == input.source then fail("the final kernel is the input") end
    expect(summary.measured):equals(false)
    for _, r in ipairs(records_of(dir, "decision")) do
      if r.status == "applied" then
        expect(r.verdict):equals("ok")
        expect(r.why):contains("not measured")
      end
    end
  end)

  it("ranks the kernel IR's schedules beside the skills: a schedule step, kept on emu only on its predicted gain", function()
    local step
    for _, st in ipairs(summary.steps) do
      if st.skill:match("^schedule:") then step = step or st end
    end
    if not step then fail("no schedule step was taken: %s", summary.steps[#summary.steps].skill) end
    local kept
    for _, r in ipairs(records_of(dir, "decision")) do
      if r.status == "applied" and r.skill == step.skill then kept = r end
    end
    expect(kept.schedule):equals(step.site)
    expect(kept.why):contains("not measured: kept on the static model's prediction of")
    expect(kept.predicted.speedup):at_least(require("klineage.search.forward").PREDICTED_MARGIN)
    expect(#kept.because):at_least(1)
    for _, reason in ipairs(kept.because) do expect(reason):matches("^legal: ") end
  end)

  it("spends no cycle on a schedule emu could not keep: one predicted under the margin is skipped unjudged", function()
    local margin = require("klineage.search.forward").PREDICTED_MARGIN
    local skipped = 0
    for _, r in ipairs(records_of(dir, "decision")) do
      if r.predicted and r.status == "skipped" and r.why:find("not judged", 1, true) then
        skipped = skipped + 1
        expect(r.predicted.speedup < margin):equals(true)
        expect(r.why):contains("emu times nothing")
        expect(r.candidate):is_nil() -- nothing was materialized or gated for it
      end
      -- every schedule the gate did judge on emu could have been kept
      if r.predicted and (r.status == "applied" or r.verdict) then expect(r.predicted.speedup):at_least(margin) end
    end
    expect(skipped):at_least(1)
    expect(summary.cycles):at_most(12)
  end)

  it("judges every candidate against the input, and only the input against itself", function()
    local evals = records_of(dir, "evaluation")
    expect(#evals):at_least(2)
    for i, e in ipairs(evals) do
      expect(e.baseline.label):equals("matmul.cu")
      if i == 1 then expect(e.baseline.self):equals(true) else expect(e.baseline.self):is_nil() end
    end
  end)

  it("journals why each skill was skipped: the precondition, guard or evidence that blocked it", function()
    local kinds = {}
    for _, r in ipairs(records_of(dir, "decision")) do
      if r.status == "skipped" then
        expect(r.why):matches("%S")
        if r.why:find("never seen to help", 1, true) then kinds.evidence = true end
        if r.why:find("^precondition") then kinds.precondition = true end
      end
    end
    expect(kinds.evidence):equals(true) -- restrict: it never helped in the walks and probes
    expect(kinds.precondition):equals(true)
  end)

  it("resumes from its journal without charging a cycle twice, to the same kernel", function()
    local again = assert(context.new { backend = "emu", journal = root, resume = "a", budget = 12, workloads = { w } })
    local used0 = again:spent()
    local s = assert(optimize(again, input, { skills = skills }))
    again:close()
    expect(s.cycles):equals(0)
    expect((again:spent())):equals(used0)
    expect(s.final.sha256):equals(summary.final.sha256)
  end)

  it("renders the optimize report from the journal: a section per step, the applied and skipped skills", function()
    local r = assert(require("klineage.report").write(dir))
    local html = assert(files.read_text(r.html))
    expect(html):contains('content="optimize"')
    expect(html):contains('<section class="step" id="step-1">')
    expect(html):contains("Applied")
    expect(html):contains("Skipped")
    expect(html):never_contains("<script")
  end)
end)

describe("the forward search against hostile candidates", function()
  -- A policy whose coalesce candidate is a kernel that is wrong by one in a
  -- single element: the gate must refuse it, and the search go on.
  local wrong_policy = {
    name = "wrong-once", direction = "forward",
    propose = function(state)
      local rows = state:rank(state:skills())
      for _, row in ipairs(rows) do
        if row.skill == "coalesce" then
          row.source, row.by = state.current.source:gsub("c%[i %* cols %+ j%] = sum;",
            "c[i * cols + j] = (i == 7 && j == 3) ? sum + 1.0f : sum;"), "test"
        end
      end
      return rows
    end,
    choose = function(_, judged) return judged:first() end,
  }

  short_it("never keeps a wrong kernel: it is rejected with the gate's verdict and the next skill is tried", function()
    local root = scratch_dir()
    local ctx = assert(context.new { backend = "emu", journal = root, run_id = "h", budget = 8, workloads = { w } })
    local s = assert(optimize(ctx, input, { skills = skills, policy = wrong_policy }))
    ctx:close()
    for _, st in ipairs(s.steps) do
      if st.skill == "coalesce" then fail("the wrong coalesce candidate was kept") end
    end
    local rejected
    for _, r in ipairs(records_of(root .. "/h", "decision")) do
      if r.skill == "coalesce" and r.status == "rejected" then rejected = r end
    end
    if not rejected then fail("the wrong coalesce candidate was not journaled as rejected") end
    expect(rejected.verdict):equals("wrong")
  end)

  short_it("stops at the budget, the input's own gate cycle counted", function()
    local ctx = assert(context.new { backend = "emu", journal = false, budget = 2, workloads = { w } })
    local s = assert(optimize(ctx, input, { skills = skills }))
    ctx:close()
    expect(s.stopped):equals("budget_exhausted")
    expect(s.cycles):equals(2)
  end)

  long_it("resumes a run that ended on its budget to the same end, charging nothing", function()
    local root = scratch_dir()
    local ctx = assert(context.new { backend = "emu", journal = root, run_id = "b", budget = 3, workloads = { w } })
    local first = assert(optimize(ctx, input, { skills = skills }))
    ctx:close()
    expect(first.stopped):equals("budget_exhausted")
    expect(#first.steps):at_least(1)
    local again = assert(context.new { backend = "emu", journal = root, resume = "b", budget = 3, workloads = { w } })
    local s = assert(optimize(again, input, { skills = skills }))
    again:close()
    expect(s.cycles):equals(0)
    expect((again:spent())):equals(3)
    expect(s.stopped):equals("budget_exhausted")
    expect(#s.steps):equals(#first.steps)
    expect(s.final.sha256):equals(first.final.sha256)
    -- with more budget, the resumed run goes on from there and pays only for what is new
    local more = assert(context.new { backend = "emu", journal = root, resume = "b", budget = 4, workloads = { w } })
    local m = assert(optimize(more, input, { skills = skills }))
    more:close()
    expect(m.cycles):at_most(1)
    expect((more:spent())):at_most(4)
  end)

  short_it("refuses an input that does not pass the gate, before any skill", function()
    local ctx = assert(context.new { backend = "emu", journal = false, budget = 4, workloads = { w } })
    local broken = { source = input.source:gsub("sum %+= ", "sum -= "), label = "broken.cu" }
    local s, f = optimize(ctx, broken, { skills = skills })
    ctx:close()
    expect(s):is_nil()
    expect(f.verdict):equals("baseline_broken")
  end)

  short_it("never keeps what the engine did not accept, whatever the policy says", function()
    local ctx = assert(context.new { backend = "emu", journal = false, budget = 4, workloads = { w } })
    local ok, err = pcall(optimize, ctx, input, { skills = skills, policy = {
      name = "keeps-refused", direction = "forward",
      propose = function(state) return { { skill = "same", site = "all", source = (state.current.source:gsub("sum %+= ", "sum -= ")) } } end,
      choose = function(_, judged) return judged[1] end } })
    ctx:close()
    expect(ok):is_false() -- a policy's bug, not a verdict
    expect(tostring(err)):contains("kept a candidate that was not accepted")
  end)
end)

describe("skills held back by conditions learned from slowdowns", function()
  local skill_rows = require "klineage.search.skill_rows"
  local learn = require "klineage.skills.learn"
  local coalesce
  for _, r in ipairs(skills) do if r.id == "coalesce" then coalesce = r end end
  -- coalesce twice more, each blocked on matmul (1024 threads a block) by a
  -- guard: one learned from a slowdown, one from a wrong result.
  local function guarded(id, outcome)
    local r = learn.copy(coalesce)
    r.id, r.preconditions = id, {}
    r.guards = { { "launch.threads", ">=", 512, why = "a test guard", support = { helped = 1, not_helped = 1 },
                   evidence = { { run = "r", key = "k", outcome = outcome }, { run = "r", key = "h", outcome = "helped" } } } }
    r.effect = { speedup = { median = 1000, min = 1000, max = 1000, n = 1 } } -- would rank first if admitted
    return r
  end
  local repo = { coalesce, guarded("slow-guarded", "hurt"), guarded("wrong-guarded", "wrong") }
  -- The first step's ranked rows, as a policy proposing them would get them.
  local function first_rows(propose, timed)
    local rows
    local root = scratch_dir()
    local ctx = assert(context.new { backend = "emu", journal = root, run_id = "c", budget = 4, workloads = { w } })
    if timed ~= nil then ctx.timed = timed end
    assert(optimize(ctx, input, { skills = repo, policy = { name = "capture", direction = "forward", propose = function(state)
      rows = state:rank(propose(state))
      return {}
    end, choose = function() end } }))
    ctx:close()
    return rows, root .. "/c"
  end

  short_it("come after every admitted row, whatever their expected gain, and say what held them back", function()
    local rows, dir = first_rows(function(state) return state:skills({ held_back = true }) end)
    local order = {}
    for i, r in ipairs(rows) do order[i] = r.skill end
    expect(table.concat(order, ",")):matches("^coalesce,[coalesce,]*slow%-guarded")
    for _, r in ipairs(rows) do
      if r.skill == "slow-guarded" then
        expect(r.held_back):contains("guard: launch.threads")
        expect(r.because[1]):contains("tried only after the ranked candidates, where timed")
      else
        expect(r.held_back):is_nil()
      end
    end
    -- still journaled as skipped by the guard, as for the klineage policy
    local skipped = {}
    for _, r in ipairs(records_of(dir, "decision")) do if r.status == "skipped" then skipped[r.skill] = true end end
    expect(skipped["slow-guarded"]):equals(true)
    expect(skipped["wrong-guarded"]):equals(true)
  end)
  short_it("never include a row that a condition from a wrong or rejected result blocks", function()
    local rows = first_rows(function(state) return state:skills({ held_back = true }) end)
    for _, r in ipairs(rows) do
      if r.skill == "wrong-guarded" then fail("a skill guarded for correctness was offered") end
    end
    expect(skill_rows.held_back_for_speed({ blockers = {} })):equals(false)
    expect(skill_rows.held_back_for_speed({ blockers = { { kind = "evidence" } } })):equals(false)
    -- "never seen to help" holds back only a record none of whose observations was wrong or rejected
    local never = { blockers = { { kind = "evidence" } } }
    expect(skill_rows.held_back_for_speed(never, { evidence = { { outcome = "no_difference" }, { outcome = "slower" } } })):equals(true)
    expect(skill_rows.held_back_for_speed(never, { evidence = { { outcome = "slower" }, { outcome = "wrong" } } })):equals(false)
  end)
  long_it("are not offered without the option, nor by klineage_explore where nothing is timed; are where it is", function()
    local rows = first_rows(function(state) return state:skills() end)
    for _, r in ipairs(rows) do expect(r.skill):equals("coalesce") end
    local explore = assert(search.load_policy("klineage_explore"))
    rows = first_rows(explore.propose)
    for _, r in ipairs(rows) do
      if r.record then expect(r.skill):equals("coalesce") end -- the rest are kir's schedules
    end
    -- ctx.timed, not a backend's name, decides (the rows only: nothing is judged here)
    local seen = {}
    for _, r in ipairs(first_rows(explore.propose, true)) do seen[r.skill] = true end
    expect(seen["slow-guarded"]):equals(true)
  end)
end)

short_describe("the forward search with an LLM", function()
  local llm = require "klineage.llm"
  -- The policy has the LLM materialize every skill, as for one no transform or template can apply.
  local ask_llm = { name = "llm-for-all", direction = "forward", propose = function(state)
    local rows = state:rank(state:skills())
    for _, row in ipairs(rows) do row.record = setmetatable({ materialize = { llm = true } }, { __index = row.record }) end
    return rows
  end, choose = function(_, judged) return judged:first() end }
  local function answering(text)
    local path = scratch_dir() .. "/answer.md"
    local h = assert(io.open(path, "w"))
    h:write(text)
    h:close()
    return llm.seam(assert(llm.from_config({ provider = "command", model = "file", command = { "/bin/cat", path } })))
  end

  it("gates the LLM's kernel like any other, and journals the call", function()
    local site = require("klineage.transforms").sites(input.source, { names = { "coalesce" }, direction = "apply" })[1]
    local coalesced = assert(require("klineage.transforms").run(site))
    local root = scratch_dir()
    local ctx = assert(context.new { backend = "emu", journal = root, run_id = "l", budget = 3, workloads = { w } })
    local s = assert(optimize(ctx, input, { skills = skills, policy = ask_llm,
      llm = answering("Here it is:\n```cuda\n" .. coalesced .. "\n```\n") }))
    ctx:close()
    expect(#s.steps):at_least(1)
    local applied
    for _, r in ipairs(records_of(root .. "/l", "decision")) do
      if r.status == "applied" then applied = r end
    end
    if not applied then fail("no LLM candidate was applied") end
    expect(applied.by):equals("llm")
    expect(applied.llm.provider):equals("command")
  end)

  it("charges every call, an answer with no code too, journaled, and goes on", function()
    local root = scratch_dir()
    local ctx = assert(context.new { backend = "emu", journal = root, run_id = "p", budget = 4, workloads = { w } })
    local s = assert(optimize(ctx, input, { skills = skills, policy = ask_llm,
      llm = answering("I would rather not write code today.") }))
    ctx:close()
    expect(#s.steps):equals(0)
    local n = 0
    for _, r in ipairs(records_of(root .. "/p", "decision")) do
      if r.status == "not_materialized" then
        n = n + 1
        expect(r.verdict):equals("llm_no_code")
      end
    end
    local calls = records_of(root .. "/p", "llm_call")
    expect(n):at_least(1)
    expect(#calls):equals(n)
    for _, c in ipairs(calls) do expect(c.charged):equals(true) end
    expect(s.cycles):equals(1 + n) -- the input, then one cycle per call
  end)
end)

describe("klineage optimize", function()
  short_it("never lets the API key into the journal, the kernels, the report or the output", function()
    local proc = require "kl.proc"
    local key = "sk-agent-0123456789abcdefSECRET"
    local server = assert(proc.spawn { argv = { require("kl.host").executable():match("^(.*)/") .. "/fake_llm_server",
                                                home .. "/tests/llm/answers" } })
    local port = assert(server:read_line(10), "the fake server did not start")
    local root = scratch_dir()
    -- /echo_ok/ answers with the request itself, its Authorization header included.
    local cmd = string.format("env OPENAI_API_KEY=%s '%s' optimize '%s/matmul.cu' --workload '%s/workload.lua' --backend emu "
      .. "--journal '%s' --run k --budget 8 --llm openai --llm-model m --llm-base-url http://127.0.0.1:%s/echo_ok/v1 2>&1",
      key, require("kl.host").executable(), example, example, root, port)
    local p = assert(io.popen(cmd))
    local out = p:read("a")
    p:close()
    server:kill()
    server:close()
    expect(out):contains("optimized kernel")
    if out:find("0123456789abcdef", 1, true) then fail("the output holds the key: %s", out) end
    local asked = false
    for _, r in ipairs(records_of(root .. "/k", "decision")) do
      if r.llm then asked = true end
    end
    if not asked then fail("the LLM was never asked: the test proves nothing") end
    local l = assert(io.popen("grep -rl 0123456789abcdef '" .. root .. "/k' ; true"))
    local hits = l:read("a")
    l:close()
    expect(hits):equals("")
  end)

  long_it("has the LLM write the baseline from the spec and its C reference, and the gate judges it first", function()
    local root = scratch_dir()
    local good, wrong = root .. "/good.md", root .. "/wrong.md"
    for path, text in pairs({ [good] = input.source, [wrong] = (input.source:gsub("sum %+= ", "sum -= ")) }) do
      local h = assert(io.open(path, "w"))
      h:write("```cuda\n", text, "\n```\n")
      h:close()
    end
    local out, code = klineage("optimize", "--workload", example .. "/workload.lua", "--backend", "emu", "--journal", root,
      "--run", "b", "--budget", "3", "--quiet", "--llm", "command", "--llm-model", "file", "--llm-command", "cat '" .. good .. "'")
    if code ~= 0 then fail("klineage optimize exited %s: %s", tostring(code), out) end
    local call = records_of(root .. "/b", "llm_baseline")[1]
    expect(call.verdict):equals("ok")
    local first = records_of(root .. "/b", "evaluation")[1]
    expect(first.candidate.label):equals("baseline-llm.cu")
    expect(first.stages.cref and first.stages.cref.verdict or first.verdict):equals("ok")
    -- A baseline that computes something else is refused by the C reference.
    out, code = klineage("optimize", "--workload", example .. "/workload.lua", "--backend", "emu", "--journal", root,
      "--run", "c", "--budget", "3", "--quiet", "--llm", "command", "--llm-model", "file", "--llm-command", "cat '" .. wrong .. "'")
    expect(code):equals(1)
    expect(out):contains("did not pass the gate")
  end)

  short_it("needs a workload, and says so", function()
    local out, code = klineage("optimize", example .. "/matmul.cu")
    expect(code):equals(2)
    expect(out):contains("--workload")
  end)

  long_it("writes the optimized kernel and the report into the run folder", function()
    local root = scratch_dir()
    local out, code = klineage("optimize", example .. "/matmul.cu", "--workload", example .. "/workload.lua", "--backend", "emu",
      "--journal", root, "--run", "cli", "--budget", "6", "--quiet")
    if code ~= 0 then fail("klineage optimize exited %s: %s", tostring(code), out) end
    expect(out):contains("no effect was measured")
    -- make run's summary shows a schedule step, its report the legality and the prediction
    check(out:find("\n  %d+%. schedule:%S+%s+[%w_]+%([^\n]*not measured %(kept on a predicted %d+%.%d%dx%)\n") ~= nil,
      "no schedule step kept on its prediction in the summary: %s", out)
    expect(files.read_text(root .. "/cli/optimized.cu")):contains("__global__")
    local report = files.read_text(root .. "/cli/report.md")
    expect(report):contains("# Optimize")
    expect(report):contains("  - predicted by the static model: ")
    expect(report):contains("kept on the static model's prediction of")
  end)
end)
