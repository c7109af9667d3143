-- klineage walk on emu, the long cases (label long: `make test-long`, CI,
-- and the ASan run): a softmax walk killed mid-way resumes to the same
-- steps paying no gate cycle twice; a policy that follows a candidate the
-- gate refused stops with an error; the greedy policy takes
-- the undo the gate accepts on sgemm. Each walks a whole costly lineage
-- (minutes of emu on two cores); walk_spec.lua keeps the cheap walks.
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local support = assert(loadfile(here .. "/walk_support.lua", "t", _ENV))()
local walk_json, records, charged, shas = support.walk_json, support.records, support.charged, support.shas

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

end)

describe("policies", function()
  it("stops with an error when a policy follows a candidate the gate refused", function()
    local bad = scratch_file([[
return { name = "follows-anything", direction = "backward",
  propose = function(state)
    local c = state:propose({ "hunks" })
    if #c == 0 then return nil, "every hunk passed" end
    return c
  end,
  choose = function(_, judged)
    for _, r in ipairs(judged:all()) do if not r.accepted then return r end end
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
