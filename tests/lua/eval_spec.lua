-- The evaluation (klineage.eval, klineage eval): suites read from their
-- folders, units judged once and resumed after a kill, and the aggregate's
-- arithmetic: the geometric mean, fast_1 and fast_2, cycles to 90 % of a
-- policy's own final and of the best final on the task, wrong kernels.
local eval = require "klineage.eval"
local files = require "klineage.base.files"
local journal = require "klineage.store.journal"

local home = require("kl.host").home
local held_out = home .. "/examples/suites/held-out"

describe("eval.suite", function()
  it("reads every task of a suite folder, with its kernel and spec", function()
    local s = assert(eval.suite(held_out))
    expect(s.name):equals("held-out")
    expect(#s.tasks):at_least(14)
    for _, t in ipairs(s.tasks) do
      expect(t.kernel.source):contains("__global__")
      expect(t.workload.kernel):matches("%S")
      expect(t.lineage):is_nil()
    end
  end)
  it("gives the seven lineages' v0, each task its own lineage", function()
    local s = assert(eval.suite("lineages"))
    expect(#s.tasks):equals(7)
    for _, t in ipairs(s.tasks) do
      expect(t.lineage):equals(t.name)
      expect(t.kernel.label):matches("^v0")
    end
  end)
  it("times raytrace on its small bench scene, under a hash of its own, and leaves every other lineage as it is", function()
    local workload = require "klineage.workload"
    for _, t in ipairs(assert(eval.suite("lineages")).tasks) do
      local w = assert(workload.load(t.name))
      if t.name ~= "raytrace" then
        expect(t.timed_at):is_nil()
        expect(t.workload.sha256):equals(w.sha256)
      else
        expect(t.timed_at.why):contains("41.7 ms")
        expect(t.timed_at.params.G):equals(64)
        expect(t.workload.sha256 ~= w.sha256):is_true()
        local bench, tests = {}, {}
        for _, s in ipairs(workload.sizes(t.workload)) do
          if s.bench then bench[#bench + 1] = s else tests[#tests + 1] = s end
        end
        -- one bench size, the small scene at the full image; the test sizes as the spec gives them
        expect(#bench):equals(1)
        expect(require("klineage.eval.table").params_text(bench[1].params)):equals("B = 4096, G = 64, H = 1080, W = 1920")
        local want = {}
        for _, s in ipairs(workload.sizes(w)) do if not s.bench then want[#want + 1] = s end end
        expect(require("klineage.skills.learn").canonical(tests)):equals(require("klineage.skills.learn").canonical(want))
      end
    end
  end)
  it("refuses a folder that is no suite", function()
    local s, f = eval.suite(scratch_dir())
    expect(s):is_nil()
    expect(f.verdict):equals("bad_input")
    s, f = eval.suite(home .. "/no/such/suite")
    expect(f.verdict):equals("bad_input")
  end)
end)

describe("eval.aggregate", function()
  local function unit(task, policy, speedup, lo, recheck, curve)
    return { task = task, policy = policy, speedup = speedup, ci = { lo, speedup }, recheck = recheck, curve = curve,
             to90 = eval.cycles_to(curve, speedup), seconds = 1 }
  end
  local results = {
    unit("a", "klineage", 4, 3.9, "ok", { { 0, 1 }, { 2, 2 }, { 5, 4 } }),
    unit("b", "klineage", 1.5, 1.4, "ok", { { 0, 1 }, { 1, 1.5 } }),
    unit("a", "forward", 2, 1.95, "ok", { { 0, 1 }, { 9, 2 } }),
    unit("b", "forward", 3, 2.9, "wrong", { { 0, 1 }, { 3, 3 } }),
    { task = "a", policy = "llm-only", not_run = "no provider" },
  }
  local rows = eval.aggregate(results)
  local by = {}
  for _, r in ipairs(rows) do by[r.policy] = r end

  it("takes the geometric mean, and counts a wrong kernel as no gain", function()
    expect(math.abs(by.klineage.geomean - math.sqrt(6))):at_most(1e-9)
    expect(math.abs(by.forward.geomean - math.sqrt(2))):at_most(1e-9)
    expect(by.forward.wrong):equals(1)
    expect(by.klineage.wrong):equals(0)
  end)
  it("counts fast_1 and fast_2 on the interval's low end", function()
    expect(by.klineage.fast1):equals(1.0)
    expect(by.klineage.fast2):equals(0.5)
    expect(by.forward.fast2):equals(0.0) -- 1.95 is below 2: the interval must clear it
  end)
  it("gives the cycles to 90 % of its own final and of the task's best", function()
    expect(by.klineage.to90):equals((5 + 1) / 2)
    -- task a: the best final is klineage's 4x; forward's 2x never reaches 3.6x
    expect(results[3].to90_best):is_nil()
    expect(results[1].to90_best):equals(5)
  end)
  it("says a policy that could not run was not run", function()
    expect(by["llm-only"].not_run):equals("no provider")
    expect(by["llm-only"].ran):equals(0)
  end)
  it("says how much of a policy's gain each family of kept steps brought", function()
    local eval_table = require "klineage.eval.table"
    results[1].gains = { { family = "map", speedup = 2 }, { family = "stage", speedup = 2 } }
    results[2].gains = { { family = "stage", speedup = 1.5 } }
    results[3].gains = { { family = "ldg", speedup = 0.5 }, { family = "map", speedup = 4 } }
    local f = {}
    for _, e in ipairs(eval_table.families(results)) do f[e.policy .. "/" .. e.family] = e end
    expect(f["klineage/stage"].steps):equals(2)
    expect(math.abs(f["klineage/stage"].geomean - math.sqrt(3))):at_most(1e-9)
    expect(math.abs(f["klineage/stage"].share - math.log(3) / math.log(6))):at_most(1e-9)
    expect(math.abs(f["klineage/map"].share - math.log(2) / math.log(6))):at_most(1e-9)
    expect(f["forward/ldg"].share):equals(0)      -- a slowdown brought none of the gain
    expect(f["forward/map"].share):equals(1)
    local one = { task = "a", policy = "klineage", steps = 2, cycles = 5, speedup = 4, recheck = "ok", stopped = "budget",
                  gains = results[1].gains }
    local text = eval_table.text({ one }, eval.aggregate({ one }))
    expect(text):contains("family (kept steps)")
    expect(text):contains("klineage         stage")
    for _, r in ipairs(results) do r.gains = nil end
  end)
end)

describe("klineage eval on emu", function()
  local root = scratch_dir()
  local argv = { "eval", held_out, "--tasks", "gemv,jacobi2d", "--policies", "klineage,forward", "--budget", "3",
                 "--backend", "emu", "--journal", root, "--quiet" }
  local out, code = klineage(table.unpack(argv))
  local dir = root .. "/eval-held-out-emu"

  it("runs every unit and prints the table and the headline figures", function()
    if code ~= 0 then fail("klineage eval exited %s: %s", tostring(code), out) end
    for _, unit in ipairs({ "gemv-klineage-emu", "gemv-forward-emu", "jacobi2d-klineage-emu", "jacobi2d-forward-emu" }) do
      expect(files.read_text(dir .. "/" .. unit .. "/result.json")):exists()
    end
    expect(out):matches("\ngemv%s+forward")
    expect(out):contains("eval-klineage-geomean: - x") -- emu times nothing
    expect(out):contains("eval-wrong-accepted: 0 kernels")
  end)
  local function eval_units()
    local n = 0
    for _, r in ipairs(assert(journal.read(dir .. "/journal.jsonl"))) do if r.kind == "eval_unit" then n = n + 1 end end
    return n
  end
  it("journals each finished unit once, and writes the eval report", function()
    expect(eval_units()):equals(4)
    expect(files.read_text(dir .. "/report.md")):contains("# Eval: held-out")
    -- Every policy ran every task: nothing to warn of.
    if files.read_text(dir .. "/report.md"):find("different tasks", 1, true) then fail("a complete eval's report warns of different tasks") end
    expect(files.read_text(dir .. "/report.html")):contains('id="task-gemv"')
  end)
  it("judges nothing again when run a second time", function()
    local before = #assert(journal.read(dir .. "/gemv-forward-emu/journal.jsonl"))
    local again, code2 = klineage(table.unpack(argv))
    expect(code2):equals(0)
    expect(#assert(journal.read(dir .. "/gemv-forward-emu/journal.jsonl"))):equals(before)
    expect(again):equals(out)
    expect(eval_units()):equals(4)
  end)
  it("past --seconds starts no unit, but still reads every finished one after an unfinished one", function()
    -- The first unit unfinished (its result gone), the three after it finished.
    local first = dir .. "/gemv-klineage-emu/result.json"
    local kept = assert(files.read_text(first))
    assert(os.remove(first))
    local late = { table.unpack(argv) }
    late[#late + 1], late[#late + 2] = "--seconds", "0"
    local table_out, c = klineage(table.unpack(late))
    assert(files.write_atomic(first, kept))
    expect(c):equals(0)
    expect(table_out):matches("\njacobi2d%s+forward")
    expect(table_out):contains("(3 of 4 units are finished")
    expect(files.read_text(first)):exists()
  end)
  it("says llm-only was not run without a provider, with no folder and even past --seconds", function()
    local late = { table.unpack(argv) }
    late[6] = "klineage,forward,llm-only"
    late[#late + 1], late[#late + 2] = "--seconds", "0"
    local table_out, c = klineage(table.unpack(late))
    expect(c):equals(0)
    expect(table_out):matches("\ngemv%s+llm%-only%s+not run: no provider")
    expect(table_out):matches("\nllm%-only%s+2%s+not run: no provider")
    expect(table_out):never_contains("units are finished") -- nothing is left to run: the four ran, llm-only cannot
    expect(files.read_text(dir .. "/gemv-llm_only-emu/journal.jsonl")):is_nil()
  end)
  it("refuses to reuse a finished unit that ran on another version of its workload", function()
    local path = dir .. "/gemv-forward-emu/result.json"
    local kept = assert(files.read_text(path))
    local r = require("cjson").decode(kept)
    expect(r.spec):matches("^%x+$")
    r.spec = string.rep("0", 64)
    assert(files.write_atomic(path, require("cjson").encode(r)))
    local msg, c = klineage(table.unpack(argv))
    assert(files.write_atomic(path, kept))
    expect(c ~= 0):is_true()
    expect(msg):contains("gemv-forward-emu finished with another version of gemv's workload")
  end)
  it("refuses an unknown task or policy, and lineages without journals to learn from", function()
    local _, c1 = klineage("eval", held_out, "--tasks", "nope", "--backend", "emu", "--journal", root)
    expect(c1):equals(2)
    local _, c2 = klineage("eval", held_out, "--policies", "klineage,greedy", "--backend", "emu", "--journal", root)
    expect(c2):equals(2)
    local msg, c3 = klineage("eval", "lineages", "--backend", "emu", "--journal", root)
    expect(c3):equals(2)
    expect(msg):contains("--learn-from")
  end)
end)

describe("the eval report of a partial eval", function()
  it("says when policies ran on different tasks, and which", function()
    local dir = scratch_dir()
    local j = assert(journal.open(dir .. "/journal.jsonl"))
    j:append({ kind = "run", run = "partial", suite = "s", budget = 3, backend = "emu" })
    local function unit(task, policy)
      j:append({ kind = "eval_unit", unit = task .. "-" .. policy, task = task, policy = policy, steps = 0, cycles = 1,
                 recheck = "ok", stopped = "no candidate left", curve = { { 0, 1 } }, seconds = 1, measured = false })
    end
    unit("x", "klineage") unit("y", "klineage") unit("x", "forward")
    j:close()
    expect(require("klineage.report").after_run("eval", dir, true)):exists()
    local text = assert(files.read_text(dir .. "/report.md"))
    expect(text):contains("The policies ran on different tasks")
    expect(text):contains("forward: x; klineage: x, y")
  end)
end)
