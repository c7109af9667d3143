-- Exit codes (klineage.base.exit_codes): the rule table against the verdict
-- registry, the CLI's own codes in-process, that no command maps a verdict
-- to a code itself, and every command's classes as separate processes:
-- 2 bad input, 1 the work ran and said no, 0 success (and the documented
-- special codes).
local exit_codes = require "klineage.base.exit_codes"
local verdicts = require "klineage.base.verdicts"
local testing = require "klineage.cli.testing"
local host = require "kl.host"
local q = testing.shell_quote

-- absolute: the processes below run in a scratch folder
local here = assert(require("kl.fs").realpath(debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")))
local saxpy = here .. "/../fixtures/workloads/saxpy"
local zeros = here .. "/../adversarial/zeros.cu"
local home = host.home

describe("the rule table", function()
  it("gives every registered verdict a code, by its blame", function()
    for _, v in ipairs(verdicts.list) do
      local code = exit_codes.BY_BLAME[v.blame]
      check(code ~= nil, "the verdict %s: its blame '%s' has no code", v.id, tostring(v.blame))
      expect(exit_codes.of(v.id)):equals(code)
      check(code == 0 or code == 1 or code == 2, "the blame %s gives %s: the rule has 0, 1 and 2 only", v.blame, tostring(code))
    end
  end)
  it("has no row for a blame that no verdict has", function()
    local used = {}
    for _, v in ipairs(verdicts.list) do used[v.blame] = true end
    for blame in pairs(exit_codes.BY_BLAME) do check(used[blame], "the row '%s' blames nothing registered", blame) end
  end)
  it("says 1 for a refused subject or a failed engine, 2 for input, 0 for none and a spent budget", function()
    for _, id in ipairs({ "wrong", "compile_error", "fault", "suspicious", "baseline_broken", "not_applicable",
                          "unsupported", "internal", "io_error", "worker_unavailable", "llm_refused" }) do
      expect(exit_codes.of(id)):equals(1)
    end
    expect(exit_codes.of("bad_input")):equals(2)
    expect(exit_codes.of("ok")):equals(0)
    expect(exit_codes.of("skipped")):equals(0)
    expect(exit_codes.of("budget_exhausted")):equals(0)
  end)
  it("reads a failure and a record by their verdict", function()
    expect(exit_codes.of(verdicts.failure("bad_input", "a bad spec"))):equals(2)
    expect(exit_codes.of(verdicts.failure("wrong", "off by one"))):equals(1)
    expect(exit_codes.of({ verdict = "ok", stages = {} })):equals(0)
  end)
  it("opening a run: a runs folder that cannot be made is input; a worker that does not start is not", function()
    expect(exit_codes.of(verdicts.failure("io_error", "cannot create"), "open_run")):equals(2)
    expect(exit_codes.of(verdicts.failure("io_error", "cannot create"))):equals(1)
    expect(exit_codes.of("worker_unavailable", "open_run")):equals(1)
    expect(exit_codes.of("bad_input", "open_run")):equals(2)
  end)
  it("keeps the documented outcomes that no verdict names, none of them named like a verdict", function()
    for name in pairs(exit_codes.OUTCOMES) do check(verdicts.get(name) == nil, "the outcome %s is a verdict id", name) end
    expect(exit_codes.of("usage")):equals(2)
    expect(exit_codes.of("failed")):equals(1)
    expect(exit_codes.of("incomplete")):equals(3)
    expect(exit_codes.of("stopped_after_fault")):equals(3)
    local m = require("klineage.cli.commands.match").exit
    expect({ m.matched, m.none, m.error, m.capped, m.skipped }):equals({ 0, 1, 2, 3, 4 })
  end)
  it("raises on what is no outcome", function()
    expect(pcall(exit_codes.of, "no_such_verdict")):equals(false)
    expect(pcall(exit_codes.of, nil)):equals(false)
    expect(pcall(exit_codes.of, { message = "no verdict" })):equals(false)
    expect(pcall(exit_codes.of, "ok", "nowhere")):equals(false)
  end)
end)

-- cli.main with a command of the test's own whose run raises what it is
-- given; stderr goes to a temporary file. Returns the code and the line.
local function main_with(raise)
  package.loaded["klineage.cli.commands.zz_exit_probe"] = { summary = "", usage = "", help = "",
    run = function() error(raise, 0) end }
  local saved, tmp = io.stderr, io.tmpfile()
  io.stderr = tmp
  local ok, code = pcall(require("klineage.cli").main, { "zz_exit_probe" }, home)
  io.stderr = saved
  package.loaded["klineage.cli.commands.zz_exit_probe"] = nil
  tmp:seek("set")
  local said = tmp:read("a")
  tmp:close()
  if not ok then error(code, 0) end
  return code, said
end

describe("a failure that escapes a command", function()
  it("exits by its blame: 2 input, 1 candidate or engine, 0 budget", function()
    local code, said = main_with(verdicts.failure("bad_input", "a bad spec"))
    expect(code):equals(2)
    expect(said):equals("klineage zz_exit_probe: bad_input: a bad spec\n")
    expect((main_with(verdicts.failure("wrong", "off")))):equals(1)
    expect((main_with(verdicts.failure("io_error", "disk full")))):equals(1)
    code, said = main_with(verdicts.failure("budget_exhausted", "the budget of 3 gate cycles is spent"))
    expect(code):equals(0)
    expect(said):contains("budget_exhausted: the budget of 3 gate cycles is spent")
  end)
  it("a usage error exits 2; a table that only looks like a failure exits 1", function()
    expect((main_with({ usage = "missing FILE" }))):equals(2)
    expect((main_with({ verdict = "no_such", message = "odd" }))):equals(1)
  end)
end)

describe("the commands", function()
  it("map no verdict to a code themselves: every code comes from exit_codes", function()
    local files = require("kl.fs").list(home .. "/lua/klineage/cli/commands")
    table.sort(files)
    expect(#files):at_least(18)
    for _, name in ipairs(files) do
      local text = read_file(home .. "/lua/klineage/cli/commands/" .. name)
      local n = 0
      for line in text:gmatch("[^\n]*") do
        n = n + 1
        local code = line:gsub("%-%-.*", "")
        check(not code:find("return%s+%-?%d+%f[^%w.]"), "%s:%d returns a literal code: %s", name, n, line)
        check(not code:find("return.-%f[%w]and%s+%d+%s+or%s+%d+"), "%s:%d maps to codes itself: %s", name, n, line)
        check(not code:find("verdict%s*==%s*\"[%w_]+\"[^\n]-%f[%w]and%s+%d"), "%s:%d maps a verdict: %s", name, n, line)
        check(not code:find("%.blame"), "%s:%d reads a blame: %s", name, n, line)
        check(not code:find("os%.exit"), "%s:%d exits itself: %s", name, n, line)
      end
    end
  end)
end)

-- Runs klineage in a scratch folder with its own runs folder, no progress
-- line, and env overrides (false: unset). Returns the output and the code.
local tmp = scratch_dir()
local runs = tmp .. "/runs"
local function cli(env, ...)
  local parts = { "cd", q(tmp), "&& exec env", q("KLINEAGE_RUNS=" .. runs), "KLINEAGE_PROGRESS=0" }
  for k, v in pairs(env or {}) do parts[#parts + 1] = v and q(k .. "=" .. v) or ("-u " .. q(k)) end
  parts[#parts + 1] = "timeout 120 " .. q(host.executable())
  for _, a in ipairs({ ... }) do parts[#parts + 1] = q(a) end
  local h = io.popen(table.concat(parts, " ") .. " </dev/null 2>&1", "r")
  local out = h:read("a")
  local _, _, code = h:close()
  return out, code
end
local function exits(want, env, ...)
  local out, code = cli(env, ...)
  check(code == want, "klineage %s exited %s, not %d:\n%s", table.concat({ ... }, " "), tostring(code), want, out)
  return out
end

local broken = write_file(tmp .. "/broken.cu",
  "// @kl launch grid(cdiv(n, 256)) block(256)\n"
  .. "extern \"C\" __global__ void saxpy(int n, float a, const float *x, float *y) { y[0] = ; }\n")

describe("each command's classes, run as a process", function()
  it("compile: 2 a missing file, 1 a kernel that does not compile, 0 one that does", function()
    exits(2, nil, "compile", tmp .. "/missing.cu")
    exits(1, nil, "compile", broken)
    exits(0, nil, "compile", saxpy .. "/v0.cu")
  end)
  it("gate: 2 a missing kernel, 1 a wrong kernel on emu, 0 the lineage's own", function()
    exits(2, nil, "gate", saxpy, "--backend", "emu", "--kernel", tmp .. "/missing.cu")
    local out = exits(1, nil, "gate", saxpy, "--backend", "emu", "--kernel", zeros)
    expect(out):contains(": wrong\n")
    exits(0, nil, "gate", saxpy, "--backend", "emu")
  end)
  it("gate: 2 a runs folder that cannot be made (open_run), 1 a backend with no device", function()
    local file = write_file(tmp .. "/plain", "x")
    exits(2, nil, "gate", saxpy, "--backend", "fake", "--journal", file .. "/runs")
    exits(1, { CUDA_VISIBLE_DEVICES = "" }, "gate", saxpy, "--backend", "cuda")
  end)
  it("bench: 2 a bad option, 0 with a wrong version in the lineage (a row, whatever its verdict)", function()
    exits(2, nil, "bench", saxpy, "--backend", "emu", "--budget", "1.5")
    local w = tmp .. "/with_wrong"
    assert(os.execute("mkdir -p " .. q(w) .. " && cp " .. q(saxpy .. "/v0.cu") .. " " .. q(zeros) .. " " .. q(w)))
    write_file(w .. "/workload.lua", (read_file(saxpy .. "/workload.lua")
      :gsub('lineage = { "v0.cu" }', 'lineage = { "v0.cu", "zeros.cu" }')))
    local out = exits(0, nil, "bench", w, "--backend", "emu")
    expect(out):matches("\nzeros%.cu%s+wrong")
  end)
  it("optimize: 2 no workload, 1 an input that does not compile, 0 a run, 0 a budget spent before the input", function()
    exits(2, nil, "optimize", saxpy .. "/v0.cu")
    exits(1, nil, "optimize", broken, "--workload", saxpy, "--backend", "emu", "--budget", "2", "--quiet")
    exits(0, nil, "optimize", saxpy .. "/v0.cu", "--workload", saxpy, "--backend", "emu", "--budget", "1", "--run", "spent",
      "--quiet")
    -- the same run with another input: its one cycle is spent before the input is judged
    local other = write_file(tmp .. "/other.cu", (read_file(saxpy .. "/v0.cu"):gsub("a %* x%[i%]", "x[i] * a")))
    local out = exits(0, nil, "optimize", other, "--workload", saxpy, "--backend", "emu", "--budget", "1", "--run", "spent",
      "--quiet")
    expect(out):contains("budget_exhausted")
  end)
  it("walk: 2 a bad budget, 0 a walk that spends its budget of 0", function()
    exits(2, nil, "walk", saxpy, "--backend", "emu", "--budget", "-1")
    exits(0, nil, "walk", saxpy, "--backend", "emu", "--budget", "0", "--quiet")
  end)
  it("eval: 2 no suite, 0 a run that starts no unit (--seconds 0)", function()
    exits(2, nil, "eval", tmp .. "/no_suite", "--backend", "emu")
    exits(0, nil, "eval", home .. "/examples/suites/held-out", "--backend", "emu", "--seconds", "0", "--quiet")
  end)
  it("journal and report: 2 no run, 0 a run; report 1 where its files cannot be written", function()
    exits(2, nil, "journal", "show", "no-such-run")
    exits(2, nil, "report", "no-such-run")
    local out = exits(0, nil, "gate", saxpy, "--backend", "fake")
    local run = out:match("journal in (%S+)\n")
    check(run ~= nil, "the gate names no run folder:\n%s", out)
    exits(0, nil, "journal", "show", run)
    exits(0, nil, "report", run)
    exits(1, nil, "report", run, "--open-in", write_file(tmp .. "/a_file", "x") .. "/out")
  end)
  it("match: 2 a bad pattern, 1 nothing matched, 0 a match, 4 an input skipped", function()
    exits(2, nil, "match", "for (", saxpy .. "/v0.cu")
    exits(1, nil, "match", "__syncthreads();", saxpy .. "/v0.cu")
    exits(0, nil, "match", "$y[$i] = $e;", saxpy .. "/v0.cu")
    exits(4, nil, "match", "$y[$i] = $e;", saxpy .. "/v0.cu", "/dev/null")
  end)
  it("skills: 2 an unknown verb or backend, 1 a probe with no device, 0 a list", function()
    exits(2, nil, "skills", "frobnicate")
    exits(2, nil, "skills", "probe", saxpy, "--backend", "bogus", "--kinds", "forward")
    exits(1, { CUDA_VISIBLE_DEVICES = "" }, "skills", "probe", saxpy, "--backend", "cuda", "--kinds", "forward")
    exits(0, nil, "skills", "list")
  end)
  it("test: 2 a missing spec, 1 a failing one, 0 a passing one", function()
    local bad = write_file(tmp .. "/bad_spec.lua", 'describe("x", function() it("fails", function() expect(1):equals(2) end) end)\n')
    local good = write_file(tmp .. "/good_spec.lua", 'describe("x", function() it("holds", function() expect(1):equals(1) end) end)\n')
    exits(2, nil, "test", tmp .. "/missing_spec.lua")
    exits(1, nil, "test", bad)
    exits(0, nil, "test", good)
  end)
  it("run: 2 a missing script, 1 one that raises, 0 one that ends, and the script's own integer", function()
    exits(2, nil, "run", tmp .. "/missing.lua")
    exits(1, nil, "run", write_file(tmp .. "/raises.lua", 'error("no")\n'))
    exits(0, nil, "run", write_file(tmp .. "/ends.lua", "local x = 1\n"))
    exits(7, nil, "run", write_file(tmp .. "/seven.lua", "return 7\n"))
  end)
  it("the rest: 2 for bad input, 0 for success", function()
    exits(2, nil, "transforms", "--direction", "sideways")
    exits(0, nil, "transforms")
    exits(2, nil, "doctor", "extra")
    exits(2, nil, "slurm", "frobnicate", "RUN")
    exits(2, nil, "worker", "--backend", "bogus")
    exits(0, nil, "worker", "--backend", "fake")
    exits(2, nil, "version", "extra")
    exits(0, nil, "version")
    exits(2, nil, "help", "frobnicate")
    exits(0, nil, "help", "gate")
    exits(2, nil)
    exits(2, nil, "frobnicate")
  end)
end)

os.execute("rm -rf " .. q(tmp))
