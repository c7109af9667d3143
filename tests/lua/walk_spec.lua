-- klineage walk on emu: the recorded policy walks a lineage back to v0 with
-- every step journaled and "not measured" effects; the budget stops a walk
-- at a step boundary and a later walk resumes it, paying no gate cycle
-- twice; bad policies and options are input errors. The costliest
-- cases (a softmax walk killed mid-way, a reduction policy that follows a
-- refused candidate, a greedy sgemm walk: about a minute of emu) are in
-- walk_long_spec.lua (label long).
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local support = assert(loadfile(here .. "/walk_support.lua", "t", _ENV))()
local walk_json, records, charged, shas = support.walk_json, support.records, support.charged, support.shas

describe("klineage walk --policy recorded", function()
  it("walks transpose back to v0, each step journaled with its facts and no measured effect", function()
    local runs = scratch_dir()
    local s = walk_json("transpose", "--policy", "recorded", "--journal", runs, "--run", "r")
    expect(#s.steps):equals(6)
    expect(s.steps[1].from):equals("v6_tile64.cu")
    expect(s.steps[6].to):equals("v0_naive.cu")
    expect(s.stopped):matches("first version")
    for _, st in ipairs(s.steps) do
      expect(st.effect.measured):equals(false)
      expect(st.effect.why):matches("not measured")
      expect(type(st.explained)):equals("table")
      expect(type(st.delta)):equals("table")
    end
    -- every transpose step is a schedule delta; the last one (v1 -> v0 read
    -- the other way: the shared tile) is stage
    expect(s.schedule_deltas):equals({ explained = 6, total = 6 })
    expect(s.steps[6].delta.text):contains("stage(in")
    local steps = records(runs .. "/r", "walk_step")
    expect(#steps):equals(6)
    expect(steps[1].delta.explained):equals(true)
    expect(steps[1].facts_before["define.TILE"]):equals(64)
    expect(steps[6].facts_after["loops.count"] ~= nil):equals(true)
    local sessions = records(runs .. "/r", "walk_session")
    expect(#sessions):equals(#steps + 1) -- one after each step, one at the end
    expect(sessions[#sessions].stopped ~= nil):equals(true)
  end)
end)

describe("resume", function()
  it("a budget stops the walk between steps; more budget finishes it the same way", function()
    local runs = scratch_dir()
    local full = walk_json("transpose", "--policy", "recorded", "--journal", runs, "--run", "full")
    local part = walk_json("transpose", "--policy", "recorded", "--journal", runs, "--run", "b", "--budget", "2")
    expect(part.stopped):equals("budget_exhausted")
    expect(#part.steps):equals(2)
    local rest = walk_json("transpose", "--policy", "recorded", "--journal", runs, "--run", "b", "--budget", "100")
    expect(shas(rest)):equals(shas(full))
    expect(rest.cycles):equals(full.cycles - 2)
  end)
end)

describe("policies", function()
  it("runs the example policy from examples/", function()
    local s = walk_json("transpose", "--policy", here .. "/../../examples/policies/smallest_step.lua", "--journal", scratch_dir(),
      "--max-steps", "2")
    expect(s.policy):equals("smallest-step")
    expect(#s.steps):equals(2)
  end)
  it("refuses unknown policies, broken policy files and bad options with exit 2", function()
    local broken = scratch_file("return 42", ".lua")
    local raises = scratch_file("error('boom')", ".lua")
    for _, argv in ipairs({
      { "transpose", "--policy", "nope" },
      { "transpose", "--policy", "klineage" }, -- a forward policy: it optimizes, it does not walk
      { "transpose", "--policy", broken },
      { "transpose", "--policy", raises },
      { "transpose", "--policy", "/no/such/policy.lua" },
      { "transpose", "--budget", "-1" },
      { "transpose", "--max-steps", "0" },
      { "transpose", "--run", "../x" },
      { "no_such_workload" },
    }) do
      local out, code = klineage("walk", "--backend", "emu", "--journal", scratch_dir(), table.unpack(argv))
      if code ~= 2 then fail("%s: exit %s, want 2: %s", table.concat(argv, " "), tostring(code), out) end
      expect(#out > 0):equals(true)
    end
  end)
end)

describe("klineage walk --policy breadth", function()
  it("judges every candidate of a step and journals each as evidence", function()
    local runs = scratch_dir()
    local s = walk_json("transpose", "--policy", "breadth", "--journal", runs, "--run", "b", "--max-steps", "1")
    expect(#s.steps):equals(1)
    local evidence = records(runs .. "/b", "walk_evidence")
    local evaluations = records(runs .. "/b", "evaluation")
    expect(#evidence):at_least(2)
    -- every judged candidate is evidence, the one followed included
    expect(#evidence):equals(#evaluations)
    local followed = false
    for _, e in ipairs(evidence) do
      followed = followed or e.to == s.steps[1].to_sha256
      expect(e.effect == nil or e.effect.measured == false):equals(true)
    end
    expect(followed):equals(true)
  end)
end)

describe("klineage walk, the progress line", function()
  -- The walk's own process, its stderr a pipe (never a terminal), with
  -- env's words before it; not --quiet, so only the terminal test decides.
  local testing = require "klineage.cli.testing"
  local function walk_out(env)
    local cmd = "env " .. env .. " " .. testing.shell_quote(require("kl.host").executable())
      .. " walk transpose --backend emu --policy greedy --max-steps 1 --budget 40 --journal "
      .. testing.shell_quote(scratch_dir()) .. " 2>&1"
    local h = assert(io.popen(cmd, "r"))
    local out = h:read("a")
    local _, _, code = h:close()
    return out, code
  end

  it("writes nothing of the sort when stderr is not a terminal", function()
    local out, code = walk_out("-u KLINEAGE_PROGRESS")
    expect(code):equals(0)
    expect(out):matches("1 steps")
    expect(out):never_contains("\r")
    expect(out):never_contains("\27[")
    expect(out):never_contains("step 1  took")
  end)

  it("with KLINEAGE_PROGRESS=1: the candidate judged, the accepted so far, the kernel, the cycles, the time; each step a line", function()
    local out, code = walk_out("COLUMNS=200 KLINEAGE_PROGRESS=1")
    expect(code):equals(0)
    expect(out):contains("\r\27[Kwalk step 1  at v6_tile64.cu  cycles 0/40  0 s")
    expect(out):matches("\r\27%[Kwalk step 1: 1/%d+ [^\r]- ok  1 accepted; at v6_tile64%.cu  cycles 1/40  %d+ s")
    expect(out):matches("\r\27%[Kstep 1  took [^\r\n]+not measured[^\r\n]*\n")
    -- the step's line stays, and what follows starts on a line of its own
    expect(out):matches("\nklineage walk: report")
  end)
end)
