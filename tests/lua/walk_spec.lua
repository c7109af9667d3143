-- klineage walk on emu: the recorded policy walks a lineage back to v0 with
-- every step journaled and "not measured" effects; a walk killed mid-way
-- resumes to the same steps paying no gate cycle twice; the budget stops a
-- walk at a step boundary; bad policies and options are input errors.
local cjson = require "cjson"
local journal = require "klineage.journal"

local function walk_json(...)
  local out, code = klineage("walk", "--backend", "emu", "--quiet", "--json", ...)
  if code ~= 0 then fail("klineage walk exited %s: %s", tostring(code), out) end
  local line = out:match("(%b{})%s*$")
  if not line then fail("no JSON summary in: %s", out) end
  return cjson.decode(line)
end

local function records(dir, kind)
  local out = {}
  for _, r in ipairs((journal.read(dir .. "/journal.jsonl"))) do
    if not kind or r.kind == kind then out[#out + 1] = r end
  end
  return out
end

local function charged(dir)
  local n = 0
  for _, r in ipairs(records(dir)) do if r.charged then n = n + 1 end end
  return n
end

local function shas(summary)
  local out = {}
  for _, s in ipairs(summary.steps) do out[#out + 1] = s.to_sha256 end
  return table.concat(out, " ")
end

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
    end
    local steps = records(runs .. "/r", "walk_step")
    expect(#steps):equals(6)
    expect(steps[1].facts_before["define.TILE"]):equals(64)
    expect(steps[6].facts_after["loops.count"] ~= nil):equals(true)
    local sessions = records(runs .. "/r", "walk_session")
    expect(#sessions):equals(#steps + 1) -- one after each step, one at the end
    expect(sessions[#sessions].stopped ~= nil):equals(true)
  end)
end)

describe("resume", function()
  it("a walk killed mid-way resumes to the same steps, paying no cycle twice", function()
    local runs = scratch_dir()
    local full = walk_json("softmax", "--policy", "recorded", "--journal", runs, "--run", "full")
    expect(#full.steps):at_least(5)
    -- The same walk, killed (SIGKILL) once its first step is journaled.
    local j = runs .. "/killed/journal.jsonl"
    local script = string.format([[
%s walk softmax --backend emu --quiet --policy recorded --journal %s --run killed >/dev/null 2>&1 &
pid=$!
while n=$(grep -c '"kind":"walk_session"' %s 2>/dev/null); [ "${n:-0}" -lt 1 ]; do
  kill -0 $pid 2>/dev/null || break
  sleep 0.02
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
exit 0]], require("kl.host").executable(), runs, j)
    assert(os.execute(script))
    if #records(runs .. "/killed", "walk_end") > 0 then fail("the walk had finished before the kill: nothing was tested") end
    local before = charged(runs .. "/killed")
    expect(before):at_least(1)
    local resumed = walk_json("softmax", "--policy", "recorded", "--journal", runs, "--run", "killed")
    expect(shas(resumed)):equals(shas(full))
    expect(charged(runs .. "/killed")):equals(charged(runs .. "/full"))
    expect(resumed.cycles):equals(charged(runs .. "/full") - before)
    -- Each step is journaled once, however often the walk ran.
    expect(#records(runs .. "/killed", "walk_step")):equals(#full.steps)
    -- The killed session's cost so far is in the journal: the sessions'
    -- last records add up to every cycle charged.
    local last = {}
    for _, r in ipairs(records(runs .. "/killed", "walk_session")) do last[r.session] = r end
    local sessions, cycles = 0, 0
    for _, r in pairs(last) do sessions, cycles = sessions + 1, cycles + r.cycles end
    expect(sessions):equals(2)
    expect(cycles):equals(charged(runs .. "/full"))
  end)

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
    local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
    local s = walk_json("transpose", "--policy", here .. "/../../examples/walk_smallest_step.lua", "--journal", scratch_dir(),
      "--max-steps", "2")
    expect(s.policy):equals("smallest-step")
  end)
  it("refuses unknown policies, broken policy files and bad options with exit 2", function()
    local broken = scratch_file("return 42", ".lua")
    local raises = scratch_file("error('boom')", ".lua")
    for _, argv in ipairs({
      { "transpose", "--policy", "nope" },
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
  it("stops with an error when a policy follows a candidate the gate refused", function()
    local bad = scratch_file([[
return { name = "follows-anything", step = function(walk)
  local c = walk:propose({ "hunks" })
  for _, r in ipairs(walk:judge(c)) do if not r.accepted then return r end end
  return nil, "every hunk passed"
end }]], ".lua")
    local out, code = klineage("walk", "reduction", "--backend", "emu", "--quiet", "--policy", bad, "--journal", scratch_dir())
    if out:match("every hunk passed") then it.skip("", "every hunk revert passed the gate: no refused candidate to follow") end
    expect(code):equals(1)
    expect(out):matches("did not accept")
  end)
end)

describe("klineage walk --policy greedy", function()
  it("takes the undo the gate accepts and is at the expert's previous version again", function()
    local runs = scratch_dir()
    local s = walk_json("sgemm", "--policy", "greedy", "--journal", runs, "--run", "g", "--max-steps", "2")
    expect(#s.steps):equals(2)
    expect(s.steps[1].producer.kind):equals("transform")
    expect(s.steps[1].producer.name):equals("double_buffer")
    -- undo(double_buffer) of v7 is v6 but for its comments: the walk knows
    -- it is at v6, so the second step may revert v6's recorded hunks.
    expect(s.steps[2].from):equals("v6_warptile.cu")
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
  local testing = require "klineage.testing"
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
