-- The search contract (lua/klineage/search/): the built-in policies found
-- by their folder, a policy file checked before it runs, the example
-- policies (examples/policies/) under `klineage optimize --policy FILE`
-- and under `klineage eval` (a seeded one once per seed), a frontier of
-- several kernels, every LLM call a policy makes through its state
-- charged to the budget, and the engine asking the run context, never a
-- backend's name or the budget's fields.
local context = require "klineage.device.context"
local files = require "klineage.base.files"
local journal = require "klineage.store.journal"
local search = require "klineage.search"
local workload = require "klineage.workload"

local home = require("kl.host").home
local example = home .. "/examples/optimize"
local policies = home .. "/examples/policies"
local w = assert(workload.load(example .. "/workload.lua"))
local input = { source = assert(files.read_text(example .. "/matmul.cu")), label = "matmul.cu" }

local function records_of(dir, kind)
  local out = {}
  for _, r in ipairs(assert(journal.read(dir .. "/journal.jsonl"))) do
    if not kind or r.kind == kind then out[#out + 1] = r end
  end
  return out
end

local function run(policy, budget, opts)
  local root = scratch_dir()
  local ctx = assert(context.new { backend = "emu", journal = root, run_id = "r", budget = budget, workloads = { w } })
  opts = opts or {}
  opts.policy, opts.input, opts.direction = policy, input, "forward"
  local s, f = search.run(ctx, w, opts)
  ctx:close()
  return s, f, root .. "/r"
end

describe("the policies", function()
  it("are the files of search/policies/, each loaded by its name, forward or backward", function()
    local names = {}
    for _, file in ipairs(require("kl.fs").list(home .. "/lua/klineage/search/policies")) do
      local p = assert(search.load_policy(file:match("^(.-)%.lua$")))
      names[#names + 1] = p.name
      expect(search.load_policy(p.name).name):equals(p.name)
    end
    table.sort(names)
    local both = {}
    for _, n in ipairs(search.policies("forward")) do both[#both + 1] = n end
    for _, n in ipairs(search.policies("backward")) do both[#both + 1] = n end
    table.sort(both)
    expect(table.concat(both, ",")):equals(table.concat(names, ","))
    expect(table.concat(search.policies("backward"), ",")):equals("breadth,greedy,recorded")
    expect(table.concat(search.policies("forward"), ",")):equals("forward,klineage,klineage_explore,llm-only,memory,random,schedule")
    expect(search.load_policy("random").seeded):equals(true)
  end)

  it("says what is wrong with a policy that is not one, before anything runs", function()
    for _, case in ipairs({
      { 'return { name = "p", direction = "forward", choose = function() end }', "propose must be a function" },
      { 'return { name = "p", direction = "sideways", propose = print, choose = print }', "direction must be" },
      { 'return { name = "p", direction = "forward", propose = print, choose = print, needs = { "gpu" } }', "unknown need 'gpu'" },
      { 'return { name = "p", direction = "forward", propose = print, choose = print, seeded = 1 }', "seeded must be" },
      { "return 42", "did not return a table" },
      { "error('boom')", "raised while loading" },
    }) do
      local p, f = search.load_policy(scratch_file(case[1], ".lua"))
      expect(p):is_nil()
      expect(f.verdict):equals("bad_input")
      expect(f.message):contains(case[2])
    end
    local _, f = search.load_policy("recorded", "forward")
    expect(f.message):contains("the policy recorded searches backward")
    _, f = search.load_policy("nope")
    expect(f.message):contains("no policy named 'nope'")
  end)

  it("refuses a run that lacks what the policy needs, before any cycle", function()
    local s, f = run({ name = "wants", direction = "forward", needs = { "llm" }, propose = print, choose = print }, 3)
    expect(s):is_nil()
    expect(f.verdict):equals("llm_unavailable")
  end)
end)

describe("the example policies", function()
  local sizes = { ["greedy.lua"] = 10, ["epsilon_greedy.lua"] = 30, ["beam2.lua"] = 40 }
  it("are short: greedy about 10 lines, epsilon-greedy at most 30, beam-2 at most 40", function()
    for file, most in pairs(sizes) do
      local n = select(2, assert(files.read_text(policies .. "/" .. file)):gsub("\n", ""))
      expect(n):at_most(most)
    end
  end)

  it("run under klineage optimize --policy FILE", function()
    local root = scratch_dir()
    for file, name in pairs({ ["greedy.lua"] = "greedy-example", ["epsilon_greedy.lua"] = "epsilon-greedy", ["beam2.lua"] = "beam-2" }) do
      local out, code = klineage("optimize", example .. "/matmul.cu", "--workload", example .. "/workload.lua", "--backend", "emu",
        "--journal", root, "--run", name, "--budget", "6", "--quiet", "--policy", policies .. "/" .. file)
      if code ~= 0 then fail("%s: exit %s: %s", file, tostring(code), out) end
      expect(out):contains("policy " .. name)
      local last = records_of(root .. "/" .. name, "optimize_end")[1]
      expect(last.policy):equals(name)
      expect(#records_of(root .. "/" .. name, "decision")):at_least(1)
      -- the first skill the repository ranks is admitted at matmul and correct: every example keeps it
      expect(records_of(root .. "/" .. name, "optimize_step")[1].skill):equals("coalesce")
    end
  end)

  it("run under klineage eval, the seeded one once per seed", function()
    local root = scratch_dir()
    local list = table.concat({ policies .. "/greedy.lua", policies .. "/epsilon_greedy.lua", policies .. "/beam2.lua" }, ",")
    local out, code = klineage("eval", home .. "/examples/suites/held-out", "--tasks", "gemv", "--policies", list, "--seeds", "2",
      "--budget", "3", "--backend", "emu", "--journal", root, "--quiet")
    if code ~= 0 then fail("klineage eval exited %s: %s", tostring(code), out) end
    local units = {}
    for _, r in ipairs(records_of(root .. "/eval-held-out-emu", "eval_unit")) do units[#units + 1] = r.unit end
    table.sort(units)
    local p = (policies:gsub("[^%w]", "_"))
    expect(table.concat(units, " ")):equals(table.concat({
      "gemv-" .. p .. "_beam2_lua-emu", "gemv-" .. p .. "_epsilon_greedy_lua-s1-emu",
      "gemv-" .. p .. "_epsilon_greedy_lua-s2-emu", "gemv-" .. p .. "_greedy_lua-emu" }, " "))
    expect(out):contains("eval-wrong-accepted: 0 kernels")
  end)
end)

describe("the frontier", function()
  it("is whatever choose keeps: two kernels kept, the next step proposes from both", function()
    local pair = { name = "pair", direction = "forward",
      propose = function(state)
        local rows = {}
        for _, node in ipairs(state.frontier) do
          for _, row in ipairs(state:in_order(state:transforms({ node = node }))) do rows[#rows + 1] = row end
        end
        return rows
      end,
      choose = function(_, judged)
        local kept = {}
        for _, r in ipairs(judged) do
          if r.accepted then kept[#kept + 1] = r end
          if #kept == 2 then break end
        end
        return table.unpack(kept)
      end }
    local s, f, dir = run(pair, 9)
    if not s then fail("%s", tostring(f)) end
    local by_step = {}
    for _, r in ipairs(records_of(dir, "optimize_step")) do by_step[r.step] = (by_step[r.step] or 0) + 1 end
    expect(by_step[1]):equals(2)
    local step1 = records_of(dir, "optimize_step")
    local parents = {}
    for _, r in ipairs(records_of(dir, "decision")) do
      if r.step == 2 then parents[r.kernel] = true end
    end
    expect(parents[step1[1].to] or false):equals(true)
    if not parents[step1[2].to] then
      -- the budget may end step 2 before the second kernel's candidates: then it is the first kernel's alone
      expect(s.stopped):equals("budget_exhausted")
    end
    -- the final kernel is the frontier's first: the first kept of the last step taken
    local last
    for _, st in ipairs(s.steps) do if not last or st.step > last.step then last = st end end
    expect(s.final.sha256):equals(last.to)
  end)
end)

describe("the budget", function()
  local llm = require "klineage.llm"
  local function answering(text)
    local path = scratch_file(text, ".md")
    return llm.seam(assert(llm.from_config({ provider = "command", model = "file", command = { "/bin/cat", path } })))
  end
  -- A policy that asks the LLM itself, through its state, every step.
  local asks = { name = "asks", direction = "forward",
    propose = function(state)
      local text = state:ask_llm({ kernel = state.current.source, workload = state.workload }, "test")
      return text and { { skill = "asked", site = "whole", source = text } } or {}
    end,
    choose = function(_, judged) return judged:first() end }

  it("is charged for an LLM call a policy makes through its state, and journals the call", function()
    local s, _, dir = run(asks, 3, { llm = answering("```cuda\n" .. input.source:gsub("threadIdx%.x", "threadIdx.x + 0") .. "\n```\n") })
    local calls = records_of(dir, "llm_call")
    expect(#calls):at_least(1)
    for _, c in ipairs(calls) do
      expect(c.charged):equals(true)
      expect(c.purpose):equals("test")
    end
    local charged = 0
    for _, r in ipairs(records_of(dir)) do if r.charged then charged = charged + 1 end end
    expect(s.cycles):equals(charged)
    expect(charged):equals(3)
    expect(s.stopped):equals("budget_exhausted")
  end)

  it("asks nothing once it is spent", function()
    local ctx = assert(context.new { backend = "emu", journal = false, budget = 1, workloads = { w } })
    local asked = 0
    local s = assert(search.run(ctx, w, { policy = asks, input = input, llm = function() asked = asked + 1 end }))
    ctx:close()
    expect(asked):equals(0)
    expect(s.stopped):equals("budget_exhausted")
    expect(select(1, ctx:spent())):equals(1)
  end)
end)

describe("gate.judge", function()
  it("always returns an effect: not measured where nothing is timed, and why, a refused kernel's too", function()
    local gate = require "klineage.gate"
    local ctx = assert(context.new { backend = "emu", journal = false, workloads = { w } })
    local base = { source = input.source, label = "matmul.cu", kernel = w.kernel, file = w.dir .. "/matmul.cu" }
    local function judge(text)
      return gate.judge(ctx, { source = text, label = "c", kernel = w.kernel, file = w.dir .. "/c" }, w,
        { baseline = base, against = base })
    end
    local ok = judge((input.source:gsub("threadIdx%.x", "threadIdx.x + 0")))
    local wrong = judge((input.source:gsub("sum %+= ", "sum -= ")))
    ctx:close()
    expect(ok.verdict):equals("ok")
    expect(ok.effect.measured):equals(false)
    expect(ok.effect.why):contains("the emu backend times nothing")
    expect(wrong.verdict):equals("wrong")
    expect(wrong.effect.why):equals("not measured: the gate said wrong")
    expect((ctx:spent())):equals(2) -- two evaluations, no compare
  end)
end)

describe("the engine asks the run context", function()
  -- The lines that decide by a backend's name or read the budget's fields,
  -- outside the code that owns them: the device folder (the backends, the
  -- context, emu and the worker).
  local function lua_files(dir, out)
    for _, name in ipairs(require("kl.fs").list(dir)) do
      local path = dir .. "/" .. name
      if name:match("%.lua$") then out[#out + 1] = path
      elseif require("kl.fs").stat(path).type == "directory" and path ~= home .. "/lua/klineage/device" then lua_files(path, out) end
    end
    return out
  end
  it("no module outside the device folder compares backend names or reads the budget's fields", function()
    local bad = {}
    for _, path in ipairs(lua_files(home .. "/lua/klineage", {})) do
      local n = 0
      for line in assert(files.read_text(path)):gmatch("[^\n]*") do
        n = n + 1
        if line:find('backend == "emu"', 1, true) or line:find('backend == "cuda"', 1, true)
          or line:find("cycles_used", 1, true) or line:find("cycle_limit", 1, true) or line:find("%.budget%.used") then
          bad[#bad + 1] = path:sub(#home + 2) .. ":" .. n
        end
      end
    end
    expect(table.concat(bad, " ")):equals("")
  end)
end)
