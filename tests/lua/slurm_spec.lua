-- klineage on Slurm, the parts that need no cluster: the unit split and
-- the batch scripts (--dry-run), the options' checks, the deterministic
-- merge, and status/resubmit against fake sbatch/squeue/sacct on PATH
-- (tests/slurm runs the real thing, label slurm).
local batch = require "klineage.slurm.batch"
local folder = require "klineage.slurm.folder"
local options = require "klineage.slurm.options"
local files = require "klineage.base.files"
local testing = require "klineage.cli.testing"

local home = require("kl.host").home
local held_out = home .. "/examples/suites/held-out"
local q = testing.shell_quote

-- klineage with extra environment (a fake Slurm first on PATH), output and exit code.
local function klineage_env(env, ...)
  local parts = { "env" }
  for k, v in pairs(env) do parts[#parts + 1] = q(k .. "=" .. v) end
  parts[#parts + 1] = q(require("kl.host").executable())
  for _, a in ipairs({ ... }) do parts[#parts + 1] = q(a) end
  local h = io.popen(table.concat(parts, " ") .. " 2>&1", "r")
  local out = h:read("a")
  local _, _, code = h:close()
  return out, code
end

local function exists(path) return require("kl.fs").stat(path) ~= nil end

-- text with every occurrence of the plain string from replaced by to
local function replace(text, from, to)
  local out, i = {}, 1
  while true do
    local s, e = text:find(from, i, true)
    if not s then break end
    out[#out + 1] = text:sub(i, s - 1) .. to
    i = e + 1
  end
  out[#out + 1] = text:sub(i)
  return table.concat(out)
end

describe("the batch scripts", function()
  it("writes --array as ranges, with the limit after %", function()
    expect(batch.array_spec({ 0, 1, 2, 3 })):equals("0-3")
    expect(batch.array_spec({ 5, 1, 3, 4 }, 2)):equals("1,3-5%2")
    expect(batch.array_spec({ 7 })):equals("7")
  end)
  local plan = { kind = "eval", run = "/shared/runs/eval-x-cuda", cwd = "/home/me",
                 options = { partition = "gpu", account = "lab", time = "2:00:00", gpus_per_task = 1, array_limit = 8 },
                 units = { { index = 0, name = "a" }, { index = 1, name = "b" } } }
  it("asks Slurm for what the options say, one unit per array task", function()
    local s = batch.array_script(plan, { 0, 1 }, "/opt/kl/bin/klineage")
    expect(s):matches("^#!/bin/sh\n")
    for _, line in ipairs({ "#SBATCH --array=0-1%8", "#SBATCH --partition=gpu", "#SBATCH --account=lab", "#SBATCH --time=2:00:00",
                            "#SBATCH --gpus-per-task=1", "#SBATCH --chdir=/home/me",
                            "#SBATCH --output=/shared/runs/eval-x-cuda/slurm/logs/unit-%a-%A.out",
                            "exec '/opt/kl/bin/klineage' slurm unit '/shared/runs/eval-x-cuda' \"$SLURM_ARRAY_TASK_ID\"" }) do
      expect(s):contains(line .. "\n")
    end
  end)
  it("runs the merge after the array however it ended, and asks it no GPU", function()
    local s = batch.merge_script(plan, "4242", "/opt/kl/bin/klineage")
    expect(s):contains("#SBATCH --dependency=afterany:4242\n")
    expect(s):contains("exec '/opt/kl/bin/klineage' slurm merge '/shared/runs/eval-x-cuda'\n")
    expect(s):never_contains("gpus")
  end)
  it("asks for no GPU when there are none to ask for", function()
    local p = { kind = "eval", run = "/r/x", cwd = "/", options = { gpus_per_task = 0 }, units = {} }
    expect(batch.array_script(p, { 0 }, "k")):never_contains("gpus")
  end)
end)

describe("the Slurm options", function()
  it("drops the Slurm options, --journal and --run from the unit's command line", function()
    expect(options.unit_argv({ "suite", "--slurm", "--partition", "gpu", "--budget", "4", "--array-limit=3", "--journal", "/j",
                               "--run=x", "--dry-run", "--backend", "emu" }))
      :equals({ "suite", "--budget", "4", "--backend", "emu" })
  end)
  it("refuses Slurm options without --slurm, and bad values, with exit 2 and one line", function()
    local root = scratch_dir()
    local cases = {
      { { "--partition", "gpu" }, "--partition goes with --slurm" },
      { { "--slurm", "--array-limit", "0" }, "--array-limit needs a whole number >= 1" },
      { { "--slurm", "--gpus-per-task", "1.5" }, "--gpus-per-task needs a whole number >= 0" },
      { { "--slurm", "--time", "soon" }, "--time takes a Slurm time" },
      { { "--slurm", "--partition", "a b" }, "--partition takes a plain value" },
      { { "--slurm", "--seconds", "5" }, "--seconds has no meaning with --slurm" },
    }
    for _, c in ipairs(cases) do
      local out, code = klineage("eval", held_out, "--tasks", "gemv", "--backend", "emu", "--journal", root, table.unpack(c[1]))
      expect(code):equals(2)
      expect(out):contains(c[2])
      expect(select(2, out:gsub("\n", ""))):equals(1)
    end
    local out, code = klineage("walk", "sgemm", "--slurm", "--resume", "x", "--journal", root)
    expect(code):equals(2)
    expect(out):contains("--resume has no meaning with --slurm")
  end)
  it("describes every option in --help", function()
    for _, cmd in ipairs({ "eval", "walk" }) do
      local out = klineage(cmd, "--help")
      for _, o in ipairs({ "--slurm", "--partition", "--gpus-per-task", "--array-limit", "--account", "--time", "--dry-run" }) do
        expect(out):contains(o)
      end
    end
    local out = klineage("slurm", "--help")
    for _, w in ipairs({ "status RUN", "resubmit RUN", "merge RUN", "unit RUN INDEX", "--json", "--dry-run" }) do expect(out):contains(w) end
    expect(klineage("--help")):matches("\n  slurm ")
  end)
end)

describe("klineage eval --slurm --dry-run", function()
  local root = scratch_dir()
  local out, code = klineage("eval", held_out, "--tasks", "gemv,jacobi2d", "--policies", "klineage,random", "--seeds", "2",
    "--budget", "4", "--backend", "emu", "--journal", root, "--slurm", "--dry-run", "--array-limit", "2", "--partition", "debug")
  it("prints the array script, the merge script and one unit per (task, policy, seed), in the eval's order", function()
    if code ~= 0 then fail("exit %s: %s", tostring(code), out) end
    expect(out):contains("#SBATCH --array=0-5%2\n")
    expect(out):contains("#SBATCH --partition=debug\n")
    expect(out):contains("#SBATCH --dependency=afterany:JOB\n")
    expect(out):never_contains("gpus-per-task") -- emu asks for none
    expect(out):contains("0 gemv-klineage-emu\n1 gemv-random-s1-emu\n2 gemv-random-s2-emu\n3 jacobi2d-klineage-emu\n"
      .. "4 jacobi2d-random-s1-emu\n5 jacobi2d-random-s2-emu\n")
  end)
  it("writes and submits nothing", function()
    expect(exists(root .. "/eval-held-out-emu")):is_false()
  end)
  it("splits walks into one unit per lineage and policy", function()
    local w, c = klineage("walk", "sgemm,softmax", "--policy", "greedy,recorded", "--backend", "emu", "--budget", "5",
      "--journal", root, "--slurm", "--dry-run")
    if c ~= 0 then fail("exit %s: %s", tostring(c), w) end
    expect(w):contains("#SBATCH --array=0-3\n")
    expect(w):contains("0 sgemm-greedy-emu\n1 sgemm-recorded-emu\n2 softmax-greedy-emu\n3 softmax-recorded-emu\n")
    expect(exists(root .. "/walks-emu")):is_false()
  end)
  it("refuses a walk of a workload that is not there", function()
    local w, c = klineage("walk", "sgemm,nosuch", "--backend", "emu", "--journal", root, "--slurm", "--dry-run")
    expect(c):equals(2)
    expect(w):contains("nosuch")
  end)
end)

-- A finished unit's result.json as eval.unit writes it (emu: nothing timed).
local function result_of(task, policy, cycles, t)
  return { task = task, policy = policy, unit = task .. "-" .. policy .. "-emu", steps = 1, cycles = cycles, stopped = "budget_exhausted",
           recheck = "ok", measured = false, curve = { { 0, 1 } }, seconds = cycles * 0.25,
           ran_on = { backend = "emu", arch = "sm_90", time = t, device = { name = "kl.emu", arch = "emu", index = 0 } } }
end

local UNITS = { { "gemv", "klineage", 1, 1796000010 }, { "gemv", "forward", 4, 1796000003 },
                { "jacobi2d", "klineage", 2, 1796000020 }, { "jacobi2d", "forward", 4, 1796000001 } }

-- A Slurm eval folder <parent>/eval-held-out-emu with the units' results written in `order`.
local function fake_eval(parent, order)
  local run = parent .. "/eval-held-out-emu"
  local units = {}
  for i, u in ipairs(UNITS) do units[i] = { index = i - 1, name = u[1] .. "-" .. u[2] .. "-emu" } end
  assert(folder.write_plan({ schema = folder.SCHEMA, kind = "eval", run = run, cwd = home, units = units, backend = "emu", budget = 4,
                             suite = "held-out", options = { gpus_per_task = 0 },
                             argv = { held_out, "--tasks", "gemv,jacobi2d", "--policies", "klineage,forward", "--budget", "4",
                                      "--backend", "emu", "--journal", parent, "--run", "eval-held-out-emu", "--quiet" } }))
  for _, i in ipairs(order) do
    local u = UNITS[i]
    local dir = run .. "/" .. units[i].name
    assert(require("kl.proc").mkdir_p(dir))
    write_file(dir .. "/result.json", require("cjson").encode(result_of(u[1], u[2], u[3], u[4])))
  end
  return run
end

describe("klineage slurm merge of an eval", function()
  local pa, pb = scratch_dir(), scratch_dir()
  local a = fake_eval(pa, { 1, 2, 3, 4 })
  local b = fake_eval(pb, { 4, 2, 3, 1 })
  local out_a, code_a = klineage("slurm", "merge", a, "--quiet")
  local out_b, code_b = klineage("slurm", "merge", b, "--quiet")
  local ARTEFACTS = { "journal.jsonl", "table.txt", "report.md", "report.html" }
  it("writes the eval's journal, table and report", function()
    if code_a ~= 0 then fail("exit %s: %s", tostring(code_a), out_a) end
    expect(code_b):equals(0)
    for _, f in ipairs(ARTEFACTS) do expect(exists(a .. "/" .. f)):is_true() end
    expect(out_a):contains("4 of 4 units finished, merged in")
  end)
  it("gives the same bytes whatever order the units finished in", function()
    for _, f in ipairs(ARTEFACTS) do
      local ta, tb = read_file(a .. "/" .. f), read_file(b .. "/" .. f)
      -- the folders differ in their parent alone, which the command line names
      ta, tb = replace(ta, (pa:gsub("\\/", "/")), "PARENT"), replace(tb, pb, "PARENT")
      ta, tb = replace(ta, (pa:gsub("/", "\\/")), "PARENT"), replace(tb, (pb:gsub("/", "\\/")), "PARENT")
      check(ta == tb, "%s differs between two merges of the same results", f)
    end
  end)
  it("gives the same bytes when merged again, later", function()
    local before = {}
    for _, f in ipairs(ARTEFACTS) do before[f] = read_file(a .. "/" .. f) end
    require("kl.proc").sleep(1.1) -- a clock of the merge's own would show
    local _, c = klineage("slurm", "merge", a, "--quiet")
    expect(c):equals(0)
    for _, f in ipairs(ARTEFACTS) do check(read_file(a .. "/" .. f) == before[f], "%s changed when merged again", f) end
  end)
  it("keeps the eval's unit order, and the units' own times only", function()
    local records = assert(require("klineage.store.journal").read(a .. "/journal.jsonl"))
    expect(records[1].kind):equals("run")
    expect(records[1].time):equals(1796000001) -- the earliest unit's start
    local names = {}
    for i = 2, #records do names[#names + 1] = records[i].unit end
    expect(names):equals({ "gemv-klineage-emu", "gemv-forward-emu", "jacobi2d-klineage-emu", "jacobi2d-forward-emu" })
    expect(records[3].time):equals(1796000003)
  end)
  it("is the table klineage eval prints for the same results", function()
    local eval = require "klineage.eval"
    local results = {}
    for i, u in ipairs(UNITS) do results[i] = eval.read_result(a, u[1] .. "-" .. u[2] .. "-emu") end
    local want = require("klineage.eval.table").text(results, eval.aggregate(results))
    expect(read_file(a .. "/table.txt")):equals(want)
    expect(want):matches("\ngemv%s+forward%s+1%s+4%s+%-")
  end)
  it("says how many units are missing, and merges the rest", function()
    local c = fake_eval(scratch_dir(), { 1, 3 })
    local out, code = klineage("slurm", "merge", c)
    expect(code):equals(0)
    expect(out):contains("(2 of 4 units are finished")
    expect(out):contains("2 of 4 units finished")
    expect(out):contains("klineage slurm resubmit")
  end)
  it("refuses a folder that is no Slurm run", function()
    local out, code = klineage("slurm", "status", scratch_dir())
    expect(code):equals(2)
    expect(out):contains("is not a Slurm run")
  end)
end)

-- A fake Slurm: sbatch, squeue and sacct as shell scripts reading what the test wrote.
local function fake_slurm(dir, opts)
  local bin = dir .. "/bin"
  assert(require("kl.proc").mkdir_p(bin))
  local function script(name, body)
    write_file(bin .. "/" .. name, "#!/bin/sh\n" .. body .. "\n")
    assert(os.execute("chmod +x " .. q(bin .. "/" .. name)))
  end
  script("squeue", "cat " .. q(dir .. "/queue"))
  write_file(dir .. "/queue", opts.queue or "")
  script("sacct", opts.sacct or "echo 'sacct: error: Slurm accounting storage is disabled' >&2; exit 1")
  -- sbatch keeps each script it was given and answers job ids from 100 up
  script("sbatch", opts.sbatch or ("n=$(ls " .. q(dir .. "/submitted") .. " 2>/dev/null | wc -l); mkdir -p " .. q(dir .. "/submitted")
    .. "; cp \"$2\" " .. q(dir .. "/submitted") .. "/$((100 + n)).sh; echo $((100 + n))"))
  return { PATH = bin .. ":" .. os.getenv("PATH") }
end

describe("klineage slurm status and resubmit (a fake Slurm on PATH)", function()
  local parent = scratch_dir()
  local run = fake_eval(parent, { 1 }) -- unit 0 finished
  assert(folder.record_job(run, { kind = "array", job = "7", indices = { 0, 1, 2, 3 } }))
  assert(require("kl.proc").mkdir_p(run .. "/" .. "jacobi2d-klineage-emu")) -- unit 2 started, then died
  local env = fake_slurm(parent, { queue = "7_1|RUNNING\n9|PENDING\n" })
  it("says each unit's state from the folder and squeue, without accounting", function()
    local out, code = klineage_env(env, "slurm", "status", run)
    if code ~= 0 then fail("exit %s: %s", tostring(code), out) end
    expect(out):matches("\n0%s+gemv%-klineage%-emu%s+finished%s+7")
    expect(out):matches("\n1%s+gemv%-forward%-emu%s+running%s+7%s+RUNNING")
    expect(out):matches("\n2%s+jacobi2d%-klineage%-emu%s+failed%s+7")
    expect(out):matches("\n3%s+jacobi2d%-forward%-emu%s+missing%s+7")
    expect(out):contains("1 finished, 1 running, 1 failed, 1 missing of 4 units")
    expect(out):contains("accounting: not available (sacct: sacct: error: Slurm accounting storage is disabled)")
  end)
  it("reads a pending array's ranges and sacct's states when accounting answers", function()
    local e = fake_slurm(parent, { queue = "7_[1-2%2]|PENDING\n",
                                   sacct = "printf '7_3|CANCELLED by 0\\n7_2|PENDING\\n'" })
    local out = klineage_env(e, "slurm", "status", run, "--json")
    local rows = require("cjson").decode(out).units
    expect(rows[2].state):equals("pending")
    expect(rows[3].state):equals("pending")
    expect(rows[4].state):equals("failed")
    expect(rows[4].detail):equals("sacct: CANCELLED")
    fake_slurm(parent, { queue = "7_1|RUNNING\n9|PENDING\n" })
  end)
  it("resubmits only the failed and missing units, with a merge after them", function()
    local out, code = klineage_env(env, "slurm", "resubmit", run)
    if code ~= 0 then fail("exit %s: %s", tostring(code), out) end
    expect(out):contains("resubmitted 2 units (jacobi2d-klineage-emu, jacobi2d-forward-emu) as job array 100, and the merge as job 101")
    expect(out):contains("1 units are still running or pending")
    expect(read_file(parent .. "/submitted/100.sh")):contains("#SBATCH --array=2-3\n")
    expect(read_file(parent .. "/submitted/101.sh")):contains("#SBATCH --dependency=afterany:100\n")
    local jobs = folder.jobs(run)
    expect(#jobs):equals(3)
    expect(jobs[2].job):equals("100")
    expect(jobs[3].after):equals("100")
  end)
  it("counts resubmitted units under their new job", function()
    local out = klineage_env(env, "slurm", "status", run)
    expect(out):matches("\n3%s+jacobi2d%-forward%-emu%s+missing%s+100")
  end)
  it("shows a Slurm command's error as it printed it, and exits 1", function()
    local e = fake_slurm(parent, { sbatch = "echo 'sbatch: error: Batch job submission failed: Invalid partition name specified' >&2; exit 1" })
    local out, code = klineage_env(e, "slurm", "resubmit", run)
    expect(code):equals(1)
    expect(out):contains("sbatch: error: Batch job submission failed: Invalid partition name specified")
    e = fake_slurm(parent, { queue = "" })
    write_file(parent .. "/bin/squeue", "#!/bin/sh\necho 'slurm_load_jobs error: Unable to contact slurm controller (connect failure)' >&2\nexit 1\n")
    out, code = klineage_env(e, "slurm", "status", run)
    expect(code):equals(1)
    expect(out):contains("slurm_load_jobs error: Unable to contact slurm controller (connect failure)")
  end)
  it("says so when sbatch is not on PATH", function()
    local out, code = klineage_env({ PATH = parent .. "/nothing" }, "eval", held_out, "--tasks", "gemv", "--backend", "emu",
      "--journal", parent .. "/other", "--slurm")
    expect(code):equals(1)
    expect(out):contains("sbatch")
    expect(out):contains("not found on PATH")
  end)
end)

-- A Slurm walks folder <parent>/walks-emu whose units finished with the given shipped skills as their repositories.
local WALKS = { { "sgemm-greedy-emu", { "coalesce", "smem_tiling", "ldg" } }, { "softmax-greedy-emu", { "ldg", "grid_stride", "retune" } },
                { "transpose-recorded-emu", { "smem_padding", "coalesce" } } }

local function fake_walks(parent, order)
  local run = parent .. "/walks-emu"
  local units = {}
  for i, w in ipairs(WALKS) do units[i] = { index = i - 1, name = w[1], argv = { "x" } } end
  assert(folder.write_plan({ schema = folder.SCHEMA, kind = "walk", run = run, cwd = home, units = units, options = {} }))
  for _, i in ipairs(order) do
    local dir = run .. "/" .. WALKS[i][1]
    assert(require("kl.proc").mkdir_p(dir .. "/skills"))
    local lines = {}
    for c = 1, i + 1 do lines[#lines + 1] = string.format('{"kind":"evaluation","charged":true,"seq":%d}', c) end
    lines[#lines + 1] = '{"kind":"walk_end","steps":' .. i .. ',"stopped":"budget_exhausted"}'
    write_file(dir .. "/journal.jsonl", table.concat(lines, "\n") .. "\n")
    for _, id in ipairs(WALKS[i][2]) do
      for _, name in ipairs({ id .. ".lua", id .. ".observations.jsonl" }) do
        write_file(dir .. "/skills/" .. name, read_file(home .. "/skills/sm_90/" .. name))
      end
    end
    write_file(dir .. "/skills/.learned", "test\n")
  end
  return run
end

describe("klineage slurm merge of walks", function()
  local a = fake_walks(scratch_dir(), { 1, 2, 3 })
  local b = fake_walks(scratch_dir(), { 3, 1, 2 })
  local out, code = klineage("slurm", "merge", a)
  it("pools the units' repositories with the skills merge", function()
    if code ~= 0 then fail("exit %s: %s", tostring(code), out) end
    local by_hand = scratch_dir() .. "/merged"
    local dirs = {}
    for _, w in ipairs(WALKS) do dirs[#dirs + 1] = a .. "/" .. w[1] .. "/skills" end
    local m, mc = klineage("skills", "merge", dirs[1], dirs[2], dirs[3], "--out", by_hand)
    if mc ~= 0 then fail("skills merge: %s", m) end
    local names = assert(require("kl.fs").list(a .. "/skills"))
    table.sort(names)
    local want = {}
    for _, id in ipairs({ "coalesce", "grid_stride", "ldg", "retune", "smem_padding", "smem_tiling" }) do
      want[#want + 1], want[#want + 2] = id .. ".lua", id .. ".observations.jsonl" -- each record and its observations
    end
    expect(names):equals(want)
    for _, n in ipairs(names) do check(read_file(a .. "/skills/" .. n) == read_file(by_hand .. "/" .. n), "%s differs from skills merge's", n) end
  end)
  it("writes one line per walk, in name order, the same whatever order they finished in", function()
    local _, c = klineage("slurm", "merge", b)
    expect(c):equals(0)
    local text = read_file(a .. "/walks.txt")
    expect(text):matches("\nsgemm%-greedy%-emu%s+1%s+2%s+budget_exhausted\nsoftmax%-greedy%-emu%s+2%s+3")
    expect(text):contains("3 of 3 walks finished; 6 skills merged")
    expect(read_file(b .. "/walks.txt")):equals(text)
    for _, n in ipairs(assert(require("kl.fs").list(a .. "/skills"))) do
      check(read_file(a .. "/skills/" .. n) == read_file(b .. "/skills/" .. n), "skills/%s differs between the two merges", n)
    end
  end)
  it("leaves out a walk that did not finish, and says so", function()
    local c = fake_walks(scratch_dir(), { 1, 3 })
    local o = klineage("slurm", "merge", c)
    expect(o):matches("softmax%-greedy%-emu%s+%-%s+%-%s+not finished")
    expect(o):contains("2 of 3 walks finished")
  end)
end)

-- Deep equality that tells an integer from a float.
local function same_kind(a, b, path)
  path = path or "value"
  if type(a) ~= type(b) then return false, path .. ": " .. type(a) .. " vs " .. type(b) end
  if type(a) == "number" then
    if math.type(a) ~= math.type(b) then return false, path .. ": " .. math.type(a) .. " vs " .. math.type(b) end
    if a ~= b and not (a ~= a and b ~= b) then return false, path .. ": " .. a .. " vs " .. b end
    return true
  end
  if type(a) ~= "table" then return a == b, path end
  for k, v in pairs(a) do
    local ok, why = same_kind(v, b[k], path .. "." .. tostring(k))
    if not ok then return false, why end
  end
  for k in pairs(b) do if a[k] == nil then return false, path .. "." .. tostring(k) .. " is extra" end end
  return true
end

describe("the observations a Slurm eval extracts once", function()
  local obs_file = require "klineage.slurm.observations"
  it("reads back exactly what was written: integers, floats, odd strings", function()
    local v = { { skill = "a\nb\"c\0d", n = 3, x = 0.0, y = -0.5, big = 2 ^ 70, inf = math.huge, nan = 0 / 0,
                  list = { 1, 2.0, "3", true }, nested = { [1] = "one", [3] = "three", k = false } } }
    local path = scratch_dir() .. "/o.lua"
    assert(obs_file.write(path, v))
    local back = assert(obs_file.read(path))
    local ok, why = same_kind(v, back)
    check(ok, "differs at %s", tostring(why))
  end)
  local root = scratch_dir()
  local walk_out, walk_code = klineage("walk", "transpose", "--policy", "recorded", "--backend", "emu", "--budget", "3",
    "--journal", root, "--run", "walk-t", "--quiet")
  it("learns the same records from what it reads back as from the walks", function()
    if walk_code ~= 0 then fail("the walk exited %s: %s", tostring(walk_code), walk_out) end
    local obs = require("klineage.skills.extract").folders({ root .. "/walk-t" })
    expect(#obs):at_least(1)
    assert(obs_file.write(root .. "/obs.lua", obs))
    local back = assert(obs_file.read(root .. "/obs.lua"))
    local ok, why = same_kind(obs, back)
    check(ok, "the observations differ at %s", tostring(why))
    local ser = require "klineage.skills.serialize"
    local a = require("klineage.skills.learn").repository(obs)
    local b = require("klineage.skills.learn").repository(back)
    expect(#b):equals(#a)
    for i = 1, #a do check(ser.record(a[i]) == ser.record(b[i]), "the learned %s differs", a[i].id) end
  end)
  it("gives a unit run from them the result the local eval gives", function()
    local env = fake_slurm(root, {})
    local common = { "eval", held_out, "--tasks", "gemv", "--policies", "klineage", "--budget", "2", "--backend", "emu",
                     "--learn-from", root .. "/walk-t" }
    local function with(...)
      local argv = table.move(common, 1, #common, 1, {})
      table.move({ ... }, 1, select("#", ...), #argv + 1, argv)
      return argv
    end
    local out, code = klineage_env(env, table.unpack(with("--journal", root .. "/slurm", "--slurm")))
    if code ~= 0 then fail("exit %s: %s", tostring(code), out) end
    local run = root .. "/slurm/eval-held-out-emu"
    expect(exists(run .. "/slurm/observations.lua")):is_true()
    expect(folder.read_plan(run).observations):equals("slurm/observations.lua")
    -- the array task, run here by hand: it must not need the walk folders' journals again
    assert(os.rename(root .. "/walk-t", root .. "/walk-t.away"))
    local u, uc = klineage("slurm", "unit", run, "0")
    assert(os.rename(root .. "/walk-t.away", root .. "/walk-t"))
    if uc ~= 0 then fail("the unit exited %s: %s", tostring(uc), u) end
    local l, lc = klineage(table.unpack(with("--journal", root .. "/local", "--quiet")))
    if lc ~= 0 then fail("the local eval exited %s: %s", tostring(lc), l) end
    local eval = require "klineage.eval"
    local a = eval.read_result(root .. "/local/eval-held-out-emu", "gemv-klineage-emu")
    local b = eval.read_result(run, "gemv-klineage-emu")
    for _, k in ipairs({ "steps", "cycles", "recheck", "stopped" }) do check(a[k] == b[k], "%s: %s here, %s as a unit", k, tostring(a[k]), tostring(b[k])) end
  end)
end)

describe("klineage slurm unit of a walk", function()
  it("walks through the library walk (klineage.search.walk), then learns the unit's repository", function()
    local run = scratch_dir() .. "/walks-emu"
    local walk_units = require "klineage.slurm.walk_units"
    local units = walk_units.units({ "transpose" }, { "recorded" }, { backend = "emu", budget = 4, max_steps = 1 },
      require("klineage.search.walk").flags(), run)
    assert(folder.write_plan({ schema = folder.SCHEMA, kind = "walk", run = run, cwd = home, units = units, options = {} }))
    local out, code = klineage_env({}, "slurm", "unit", run, "0")
    if code ~= 0 then fail("exit %s: %s", tostring(code), out) end
    expect(out):contains("transpose, policy recorded, emu backend: ")
    local dir = run .. "/" .. units[1].name
    expect(exists(dir .. "/skills/.learned")):is_true()
    expect(exists(dir .. "/report.md")):is_true()
    expect(walk_units.finished({ run = run, units = units }, units[1])):is_true()
    local lines = read_file(dir .. "/journal.jsonl")
    expect(lines):contains('"kind":"walk_end"')
  end)
end)
