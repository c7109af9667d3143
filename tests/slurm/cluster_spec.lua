-- klineage eval --slurm on a real single-node Slurm (tests/slurm/run.sh
-- starts it and sets SLURM_CONF): a small emu eval as a job array, merged
-- by its dependent job, equals the same eval run here without Slurm; one
-- array task stopped midway and cancelled is failed, resubmitted alone,
-- and resumes from its journal: nothing is judged twice. Walks of one
-- lineage with two policies run as two array tasks, each as the same walk
-- run here, and their merged skills are the skills merge's. It prints the
-- submission-to-start latency of each unit and the merge's time (figures,
-- not assertions: the machine is shared).
local files = require "klineage.base.files"
local journal = require "klineage.store.journal"
local testing = require "klineage.cli.testing"
local host = require "kl.host"
local proc = require "kl.proc"

local q = testing.shell_quote
local home = host.home
local suite = home .. "/examples/suites/held-out"
local root = scratch_dir()
local WAIT = 300 -- seconds any one wait may take before the spec gives up

if not os.getenv("SLURM_CONF") then error("cluster_spec.lua runs under tests/slurm/run.sh, which sets SLURM_CONF", 0) end

-- A command's output and exit code, with extra environment.
local function sh(env, argv)
  local parts = { "env" }
  for k, v in pairs(env) do parts[#parts + 1] = q(k .. "=" .. v) end
  for _, a in ipairs(argv) do parts[#parts + 1] = q(a) end
  local h = io.popen(table.concat(parts, " ") .. " 2>&1", "r")
  local out = h:read("a")
  local _, _, code = h:close()
  return out, code
end

local function kl(env, ...) return sh(env, { host.executable(), ... }) end

local function until_true(what, f)
  local t0 = host.clock()
  while true do
    local v = f()
    if v then return v end
    if host.clock() - t0 > WAIT then fail("waited %d s for %s", WAIT, what) end
    proc.sleep(0.05)
  end
end

local function queue_empty()
  local out, code = sh({}, { "squeue", "--noheader" })
  if code ~= 0 then fail("squeue: %s", out) end
  return out:match("^%s*$") ~= nil
end

local function records(path, kind)
  local n = {}
  for _, r in ipairs(journal.read(path) or {}) do
    if not kind or r.kind == kind then n[#n + 1] = r end
  end
  return n
end

-- The unit lines of an eval's table: everything before its first blank line.
local function unit_lines(text) return text:match("^(.-)\n\n") end
local function headlines(text)
  local out = {}
  for line in text:gmatch("[^\n]+") do if line:match("^eval%-") then out[#out + 1] = line end end
  return out
end

local ARGS = { suite, "--tasks", "colsum,gemv,jacobi2d", "--policies", "klineage,forward", "--budget", "4", "--backend", "emu" }
local UNITS = { "colsum-klineage-emu", "colsum-forward-emu", "gemv-klineage-emu", "gemv-forward-emu",
                "jacobi2d-klineage-emu", "jacobi2d-forward-emu" }
local VICTIM = 1 -- colsum-forward-emu: forward spends its whole budget, so it is midway after one evaluation

-- Each run its own cold compile cache: the same verdicts must not come from a shared cache.
local function eval_argv(...)
  local argv = { "eval" }
  table.move(ARGS, 1, #ARGS, 2, argv)
  table.move({ ... }, 1, select("#", ...), #argv + 1, argv)
  return argv
end

local here_out, here_code = kl({ XDG_CACHE_HOME = root .. "/cache-local" }, table.unpack(eval_argv("--journal", root .. "/local", "--quiet")))
local run = root .. "/cluster/eval-held-out-emu"

describe("klineage eval --slurm on a single-node cluster", function()
  local submitted, victim_judged_before
  it("runs the same eval here first, without Slurm", function()
    if here_code ~= 0 then fail("the local eval exited %s: %s", tostring(here_code), here_out) end
    expect(here_out):contains("eval-wrong-accepted: 0 kernels")
  end)
  it("submits one array task per unit and a merge job after them", function()
    local argv = eval_argv("--journal", root .. "/cluster", "--slurm", "--array-limit", "2")
    submitted = host.clock()
    local out, code = kl({ XDG_CACHE_HOME = root .. "/cache-slurm" }, table.unpack(argv))
    if code ~= 0 then fail("exit %s: %s", tostring(code), out) end
    expect(out):matches("submitted 6 units of .* as job array %d+, and the merge as job %d+")
    local plan = assert(require("klineage.slurm.folder").read_plan(run))
    local names = {}
    for i, u in ipairs(plan.units) do names[i] = u.name end
    expect(names):equals(UNITS)
  end)
  local array_job
  it("stops one array task midway (after its first evaluation), and scancel ends it", function()
    local jobs = require("klineage.slurm.folder").jobs(run)
    array_job = jobs[1].job
    local path = run .. "/" .. UNITS[VICTIM + 1] .. "/journal.jsonl"
    until_true("the unit's first evaluation", function() return #records(path, "evaluation") > 0 end)
    -- its process: `klineage slurm unit RUN 1`, found by its exact command line
    local want = table.concat({ host.executable(), "slurm", "unit", run, tostring(VICTIM) }, "\0") .. "\0"
    local pid
    for _, name in ipairs(require("kl.fs").list("/proc") or {}) do
      if name:match("^%d+$") then
        local h = io.open("/proc/" .. name .. "/cmdline", "rb")
        local cmd = h and h:read("a")
        if h then h:close() end
        if cmd == want then pid = tonumber(name) end
      end
    end
    if not pid then fail("no process runs unit %d (%s): it may have ended already", VICTIM, want:gsub("%z", " ")) end
    assert(proc.kill(pid, "STOP"))
    victim_judged_before = #records(path, "evaluation")
    local out, code = sh({}, { "scancel", array_job .. "_" .. VICTIM })
    if code ~= 0 then fail("scancel: %s", out) end
    until_true("the array and its merge to end", queue_empty)
    expect(victim_judged_before):at_least(1)
    expect(victim_judged_before):at_most(3)
    expect(files.read_text(run .. "/" .. UNITS[VICTIM + 1] .. "/result.json")):is_nil()
  end)
  it("says the cancelled unit failed and the rest finished, without accounting", function()
    local out, code = kl({}, "slurm", "status", run)
    if code ~= 0 then fail("exit %s: %s", tostring(code), out) end
    for i, name in ipairs(UNITS) do
      local state = i - 1 == VICTIM and "failed" or "finished"
      expect(out):matches("\n" .. (i - 1) .. "%s+" .. name:gsub("%-", "%%-") .. "%s+" .. state)
    end
    expect(out):contains("5 finished, 1 failed of 6 units")
    expect(out):contains("accounting: not available")
  end)
  it("ran the merge job after the array, which found the unit missing", function()
    local log = until_true("the merge job's log", function()
      for _, n in ipairs(require("kl.fs").list(run .. "/slurm/logs") or {}) do
        if n:match("^merge%-") then return files.read_text(run .. "/slurm/logs/" .. n) end
      end
    end)
    expect(log):contains("5 of 6 units finished")
  end)
  it("resubmits the failed unit alone, and it finishes from its journal", function()
    local out, code = kl({ XDG_CACHE_HOME = root .. "/cache-slurm" }, "slurm", "resubmit", run)
    if code ~= 0 then fail("exit %s: %s", tostring(code), out) end
    expect(out):matches("resubmitted 1 units %(" .. UNITS[VICTIM + 1]:gsub("%-", "%%-") .. "%) as job array %d+")
    until_true("the resubmitted unit and its merge to end", queue_empty)
    local status = kl({}, "slurm", "status", run)
    expect(status):contains("6 finished of 6 units")
  end)
  local merged
  it("merges by hand into the same table as the local eval", function()
    local t0 = host.clock()
    local out, code = kl({}, "slurm", "merge", run, "--quiet")
    local seconds = host.clock() - t0
    if code ~= 0 then fail("exit %s: %s", tostring(code), out) end
    print(string.format("slurm-merge-seconds: %.3f s (klineage slurm merge of 6 units, by hand, wall clock of the command)", seconds))
    merged = assert(files.read_text(run .. "/table.txt"))
    expect(unit_lines(merged)):equals(unit_lines(here_out))
    expect(headlines(merged)):equals(headlines(here_out))
  end)
  it("gives every unit the verdicts, accepted kernels and cycles it has here", function()
    for _, name in ipairs(UNITS) do
      local a = require("klineage.eval").read_result(root .. "/local/eval-held-out-emu", name)
      local b = require("klineage.eval").read_result(run, name)
      for _, k in ipairs({ "steps", "cycles", "recheck", "stopped", "verdict" }) do
        check(a[k] == b[k], "%s: %s is %s here and %s on Slurm", name, k, tostring(a[k]), tostring(b[k]))
      end
      local function accepted(dir)
        local out = {}
        for _, r in ipairs(records(dir .. "/" .. name .. "/journal.jsonl", "optimize_step")) do out[#out + 1] = r.to end
        local ends = records(dir .. "/" .. name .. "/journal.jsonl", "optimize_end")
        out[#out + 1] = ends[#ends] and ends[#ends].final
        return out
      end
      expect(accepted(run)):equals(accepted(root .. "/local/eval-held-out-emu"))
    end
  end)
  it("judged nothing twice: the resumed unit's evaluations are its cycles, each judgement once", function()
    for _, name in ipairs(UNITS) do
      local path = run .. "/" .. name .. "/journal.jsonl"
      local evals = records(path, "evaluation")
      local charged, keys = 0, {}
      for _, r in ipairs(records(path)) do if r.charged then charged = charged + 1 end end
      for _, r in ipairs(evals) do
        check(not keys[r.key], "%s judged %s twice", name, tostring(r.key))
        keys[r.key] = true
      end
      local b = require("klineage.eval").read_result(run, name)
      expect(charged):equals(b.cycles)
      expect(#evals):equals(#records(root .. "/local/eval-held-out-emu/" .. name .. "/journal.jsonl", "evaluation"))
    end
    local victim = run .. "/" .. UNITS[VICTIM + 1] .. "/journal.jsonl"
    expect(#records(victim, "resume")):equals(1)
    expect(#records(victim, "evaluation")):at_least(victim_judged_before + 1)
  end)
  it("prints each unit's submission-to-start latency", function()
    local jobs = require("klineage.slurm.folder").jobs(run)
    local starts, ends = {}, {}
    for i, name in ipairs(UNITS) do
      local log = files.read_text(string.format("%s/slurm/logs/unit-%d-%s.out", run, i - 1, jobs[1].job))
      starts[i] = log and tonumber(log:match("start, clock ([%d.]+) s"))
      ends[i] = log and tonumber(log:match("end, exit %d+, clock ([%d.]+) s"))
      check(starts[i], "unit %d has no start line in its log", i - 1)
    end
    for i, name in ipairs(UNITS) do
      -- a unit that waited for a slot (--array-limit 2): also from the last unit's end before it started
      local freed
      for j = 1, #UNITS do
        if ends[j] and ends[j] <= starts[i] and (not freed or ends[j] > freed) then freed = ends[j] end
      end
      print(string.format("slurm-start-latency-unit-%d: %.3f s from the submission%s (%s)", i - 1, starts[i] - submitted,
        freed and string.format(", %.3f s from the slot's release", starts[i] - freed) or "", name))
    end
  end)
end)

describe("klineage walk --slurm on a single-node cluster", function()
  local wrun = root .. "/walks/walks-emu"
  local WALK_UNITS = { "transpose-recorded-emu", "transpose-greedy-emu" }
  it("walks one lineage with two policies as two array tasks, and merges their skills", function()
    local out, code = kl({ XDG_CACHE_HOME = root .. "/cache-slurm" }, "walk", "transpose", "--policy", "recorded,greedy",
      "--backend", "emu", "--budget", "3", "--journal", root .. "/walks", "--slurm")
    if code ~= 0 then fail("exit %s: %s", tostring(code), out) end
    expect(out):matches("submitted 2 units of .* as job array %d+, and the merge as job %d+")
    until_true("the walks and their merge to end", queue_empty)
    local status = kl({}, "slurm", "status", wrun)
    expect(status):contains("2 finished of 2 units")
    local text = until_true("walks.txt", function() return files.read_text(wrun .. "/walks.txt") end)
    expect(text):contains("2 of 2 walks finished")
    local by_hand = root .. "/walks/by-hand"
    local m, mc = kl({}, "skills", "merge", wrun .. "/" .. WALK_UNITS[2] .. "/skills", wrun .. "/" .. WALK_UNITS[1] .. "/skills",
      "--out", by_hand)
    if mc ~= 0 then fail("skills merge: %s", m) end
    local names = assert(require("kl.fs").list(by_hand))
    table.sort(names)
    local merged = assert(require("kl.fs").list(wrun .. "/skills"))
    table.sort(merged)
    expect(merged):equals(names)
    for _, n in ipairs(names) do
      check(files.read_text(by_hand .. "/" .. n) == files.read_text(wrun .. "/skills/" .. n), "skills/%s differs from skills merge's", n)
    end
  end)
  it("walks each unit as the same walk run here does", function()
    for _, policy in ipairs({ "recorded", "greedy" }) do
      local out, code = kl({ XDG_CACHE_HOME = root .. "/cache-local" }, "walk", "transpose", "--policy", policy, "--backend", "emu",
        "--budget", "3", "--journal", root .. "/walks-local", "--json", "--quiet")
      if code ~= 0 then fail("the local walk exited %s: %s", tostring(code), out) end
      local summary = require("cjson").decode(out:match("(%b{})%s*$"))
      local line = files.read_text(wrun .. "/walks.txt"):match("\ntranspose%-" .. policy .. "%-emu[^\n]*")
      local steps, cycles = line:match("^\n%S+%s+(%d+)%s+(%d+)")
      expect(tonumber(steps)):equals(#summary.steps)
      expect(tonumber(cycles)):equals(math.tointeger(summary.cycles))
    end
  end)
end)
