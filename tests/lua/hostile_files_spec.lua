-- Hostile files and paths, second pass (issue 35), end to end where a
-- command reads or writes them:
--   every file read is a regular file under a cap, refused before a byte
--   is read (a transcript, a policy, a journal);
--   writes are atomic and checked, and never over an input (optimize
--   --out), and a regenerated skill folder loses only skill records;
--   run names, backends, lineage, reference and suite paths stay in their
--   folders;
--   a run folder has one writer at a time (its lock);
--   a stored kernel that no longer matches its hash is refused.
-- Each case runs the engine as a child under a time limit and a memory
-- cap, so that one that blocks or fills memory fails instead of hanging.
local testing = require "klineage.cli.testing"
local proc = require "kl.proc"
local exe = require("kl.host").executable()
local q = testing.shell_quote

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local saxpy = here .. "/../fixtures/workloads/saxpy"

local mkdtemp, write, read = scratch_dir, write_file, read_file -- the runner's helpers

-- A cap on the child's address space, so that an engine that reads
-- /dev/zero fails on memory instead of eating the machine's. AddressSanitizer
-- reserves terabytes of address space, so a sanitized build goes uncapped
-- (ldd asked once here, not before every run).
local function sanitized()
  local h = io.popen("ldd " .. q(exe) .. " 2>/dev/null")
  local out = h:read("a")
  h:close()
  return out:find("libasan", 1, true) ~= nil
end
local MEMORY_CAP = sanitized() and ":" or "ulimit -v 3000000"

-- klineage ARGS... under sh: the combined output and the exit code (124:
-- the time limit).
local function cli(opts, ...)
  local parts = { MEMORY_CAP .. ";" }
  if opts.shell then parts[#parts + 1] = opts.shell .. ";" end
  if opts.cwd then parts[#parts + 1] = "cd " .. q(opts.cwd) .. " &&" end
  parts[#parts + 1] = "exec env"
  for k, v in pairs(opts.env or {}) do parts[#parts + 1] = q(k .. "=" .. v) end
  parts[#parts + 1] = "timeout " .. tostring(opts.timeout or 60) .. " " .. q(exe)
  for _, a in ipairs({ ... }) do parts[#parts + 1] = q(a) end
  local h = io.popen("(" .. table.concat(parts, " ") .. ") 2>&1", "r")
  local out = h:read("a")
  local _, _, code = h:close()
  return out, code
end

-- A Lua snippet run by `klineage run` in a child: what it prints.
local function script(tmp, body, ...)
  local path = write(tmp .. "/snippet-" .. math.random(1 << 30) .. ".lua", body)
  return cli({ timeout = 30 }, "run", path, ...)
end

local function sh(cmd) assert(os.execute(cmd), cmd) end

local function exists(path) return require("kl.fs").stat(path, false) ~= nil end

local function no_traceback(out)
  expect(out):never_contains("stack traceback")
  expect(out):never_contains(".lua:")
end

-- The four files that are not regular files of a sane size, made in tmp
-- under name (a link to /dev/zero; a sparse file of `huge` bytes).
local function hostile_set(tmp, name, huge)
  local d = tmp .. "/" .. name
  sh("mkdir -p " .. q(d))
  sh("mkfifo " .. q(d .. "/fifo"))
  sh("ln -s /dev/zero " .. q(d .. "/zero"))
  sh("mkdir " .. q(d .. "/dir"))
  sh("truncate -s " .. huge .. " " .. q(d .. "/huge"))
  return {
    { "a FIFO", d .. "/fifo", "a FIFO, not a regular file" },
    { "/dev/zero", d .. "/zero", "a character device, not a regular file" },
    { "a directory", d .. "/dir", "a directory, not a regular file" },
    { "a huge file", d .. "/huge", huge .. " bytes, over the " },
  }
end

describe("files that are not regular files, where the engine reads one", function()
  local tmp = mkdtemp()

  -- LLM replay: the transcript is read on the first call.
  for _, case in ipairs(hostile_set(tmp, "transcript", 100 * 1024 * 1024)) do
    it("refuses " .. case[1] .. " as the replay transcript, at once, in one line", function()
      local out, code = script(tmp, [[
        local answers, f = require("klineage.llm.providers.replay").load(arg[1])
        print(answers and "loaded" or (f.verdict .. ": " .. f.message))
      ]], case[2])
      expect(code):equals(0)
      expect(out):contains("bad_input: the transcript: cannot read '" .. case[2] .. "': " .. case[3])
      no_traceback(out)
    end)
  end

  for _, case in ipairs(hostile_set(tmp, "policy", 5 * 1024 * 1024)) do
    it("refuses " .. case[1] .. " as --policy, at once, exit 2", function()
      local out, code = cli({ timeout = 30 }, "walk", saxpy, "--backend", "fake", "--journal", tmp .. "/runs",
        "--policy", case[2])
      expect(code):equals(2)
      expect(out):contains("cannot load the policy: cannot read '" .. case[2] .. "': " .. case[3])
      no_traceback(out)
    end)
  end

  -- The sparse file is over the memory cap: read whole, it would fail the child.
  for _, case in ipairs(hostile_set(tmp, "journal", 4 * 1024 * 1024 * 1024)) do
    it("refuses " .. case[1] .. " as a run's journal.jsonl (journal show, report, resume), exit 2", function()
      local run = tmp .. "/runs-" .. case[1]:gsub("%W", "")
      sh("mkdir -p " .. q(run) .. " && ln -s " .. q(case[2]) .. " " .. q(run .. "/journal.jsonl"))
      for _, argv in ipairs({ { "journal", "show", run }, { "report", run },
                              { "bench", saxpy, "--backend", "fake", "--resume", run } }) do
        local out, code = cli({ timeout = 30 }, table.unpack(argv))
        expect(code):equals(2)
        if case[1] == "a huge file" then
          expect(out):contains("over the 512 MiB limit of a journal")
        else
          expect(out):contains("journal.jsonl is a ")
        end
        no_traceback(out)
      end
    end)
  end

  it("refuses a FIFO as a journal it would append to, without blocking", function()
    local path = tmp .. "/append-fifo"
    sh("mkfifo " .. q(path))
    local out, code = script(tmp, [[
      local j, f = require("klineage.store.journal").open(arg[1])
      print(j and "opened" or (f.verdict .. ": " .. f.message))
    ]], path)
    expect(code):equals(0)
    expect(out):contains("bad_input: cannot write '" .. path .. "': a FIFO, not a regular file")
  end)
end)

-- A folder with saxpy's spec and kernel, and an empty skill repository.
-- Runs here judge a handful of candidates (--budget 3): these cases are about files and locks,
-- and a full search on the fake backend costs minutes under ASan.
local function workspace(tmp)
  sh("mkdir -p " .. q(tmp .. "/w") .. " " .. q(tmp .. "/skills"))
  sh("cp " .. q(saxpy .. "/workload.lua") .. " " .. q(saxpy .. "/v0.cu") .. " " .. q(tmp .. "/w/"))
  return tmp .. "/w", tmp .. "/w/v0.cu", tmp .. "/skills"
end

describe("optimize --out", function()
  local tmp = mkdtemp()
  local w, kernel, skills = workspace(tmp)
  local function optimize(out, ...)
    return cli({ timeout = 90 }, "optimize", kernel, "--workload", w, "--backend", "fake", "--budget", "3", "--skills", skills,
      "--journal", tmp .. "/runs", "--quiet", "--out", out, ...)
  end

  it("refuses /dev/full (a device: a write there fails, and never exit 0 with nothing written)", function()
    local out, code = optimize("/dev/full")
    expect(code):equals(2)
    expect(out):contains("--out: cannot write '/dev/full': a char device, not a regular file")
    no_traceback(out)
  end)

  it("refuses to overwrite its own workload spec, also through a link", function()
    local spec = read(w .. "/workload.lua")
    sh("ln -s workload.lua " .. q(w .. "/link.lua"))
    for _, out_path in ipairs({ w .. "/workload.lua", w .. "/link.lua" }) do
      local out, code = optimize(out_path)
      expect(code):equals(2)
      expect(out):contains("will not write '" .. out_path .. "': it is an input of this command")
      expect(read(w .. "/workload.lua")):equals(spec)
    end
  end)

  it("refuses to overwrite its kernel through a hard link", function()
    local text = read(kernel)
    sh("ln " .. q(kernel) .. " " .. q(tmp .. "/hard.cu"))
    local out, code = optimize(tmp .. "/hard.cu")
    expect(code):equals(2)
    expect(out):contains("it is an input of this command ('" .. kernel .. "')")
    expect(read(kernel)):equals(text)
  end)

  it("reports a failed write (a file size limit, as a full disk) and keeps the old file, no temporary left", function()
    local dir = tmp .. "/full"
    sh("mkdir -p " .. q(dir))
    write(dir .. "/out.cu", "old\n")
    local path = write(tmp .. "/writer.lua", [[
      local ok, f = require("klineage.base.files").write_out(arg[1], string.rep("x", 1 << 20))
      print(ok and "written" or (f.verdict .. ": " .. f.message))
    ]])
    local out = cli({ shell = "trap '' XFSZ; ulimit -f 64" }, "run", path, dir .. "/out.cu")
    expect(out):contains("io_error: cannot write '" .. dir .. "/out.cu': File too large")
    expect(read(dir .. "/out.cu")):equals("old\n")
    local h = io.popen("ls -A " .. q(dir))
    expect(h:read("a")):equals("out.cu\n")
    h:close()
  end)
end)

describe("skills merge --out DIR", function()
  it("removes only the stale skill records it wrote, never another .lua file there", function()
    local tmp = mkdtemp()
    local home = require("kl.host").home
    local out = tmp .. "/out"
    sh("mkdir -p " .. q(out))
    local notes = write(out .. "/notes.lua", "-- my notes, not a skill\nreturn {}\n")
    local header = require("klineage.skills.serialize").HEADER
    local stale = write(out .. "/old-skill.lua", header .. "\nreturn { id = \"old-skill\" }\n")
    local o, code = cli({ timeout = 120 }, "skills", "merge", home .. "/skills/sm_90", "--out", out)
    expect(code):equals(0)
    expect(exists(notes)):is_true()
    expect(read(notes)):equals("-- my notes, not a skill\nreturn {}\n")
    expect(exists(stale)):is_false()
    expect(o):contains("kept " .. notes .. ": not a skill record file")
  end)
end)

describe("paths that lead out of their folder", function()
  local tmp = mkdtemp()
  local w, kernel, skills = workspace(tmp)
  -- A suite of one task: saxpy.
  local suite = tmp .. "/suite"
  sh("mkdir -p " .. q(suite .. "/t1") .. " && cp " .. q(w .. "/workload.lua") .. " " .. q(w .. "/v0.cu") .. " " .. q(suite .. "/t1/")
    .. " && cp " .. q(w .. "/v0.cu") .. " " .. q(suite .. "/t1/kernel.cu"))

  for _, name in ipairs({ ".", "..", "" }) do
    it(string.format("refuses --run %q before a folder or journal is made (optimize, walk, eval)", name), function()
      local root = tmp .. "/runs-" .. (name == "" and "empty" or #name)
      sh("mkdir -p " .. q(root .. "/inner"))
      local r = root .. "/inner"
      for _, argv in ipairs({
        { "optimize", kernel, "--workload", w, "--skills", skills },
        { "walk", w },
        { "eval", suite, "--skills", skills },
      }) do
        table.move({ "--backend", "fake", "--journal", r, "--run", name }, 1, 6, #argv + 1, argv)
        local out, code = cli({ timeout = 60 }, table.unpack(argv))
        expect(code):equals(2)
        no_traceback(out)
        expect(exists(r .. "/journal.jsonl")):is_false()
        expect(exists(root .. "/journal.jsonl")):is_false()
        expect(exists(r .. "/.lock")):is_false()
      end
    end)
  end

  it("refuses a run name with a slash or a control character in the library too", function()
    local runs = require "klineage.store.runs"
    for _, id in ipairs({ "a/b", "..", ".", "", "new\nline" }) do
      local run, f = runs.create(tmp .. "/lib-runs", id)
      expect(run):is_nil()
      expect(f.verdict):equals("bad_input")
    end
    expect(exists(tmp .. "/lib-runs")):is_false()
  end)

  it("checks eval --backend before it makes a folder", function()
    local r = tmp .. "/eval-runs"
    local out, code = cli({ timeout = 60 }, "eval", suite, "--backend", "a/b", "--journal", r, "--skills", skills)
    expect(code):equals(2)
    expect(out):contains("unknown backend 'a/b' (cuda, emu, fake)")
    expect(exists(r)):is_false()
  end)

  it("refuses a suite task whose folder or kernel is a link out of the suite", function()
    local outside = tmp .. "/outside"
    sh("mkdir -p " .. q(outside) .. " && cp " .. q(suite .. "/t1/") .. "* " .. q(outside))
    write(tmp .. "/secret.cu", "// a file outside the suite\n")
    local cases = {
      { "ln -s " .. q(outside) .. " " .. q(suite .. "/t2"), "task t2: '" .. suite .. "/t2' leads out of '" .. suite .. "'" },
      { "rm " .. q(suite .. "/t2") .. " && ln -sf " .. q(tmp .. "/secret.cu") .. " " .. q(suite .. "/t1/kernel.cu"),
        "task t1: '" .. suite .. "/t1/kernel.cu' leads out of '" .. suite .. "'" },
    }
    for _, c in ipairs(cases) do
      sh(c[1])
      local r = tmp .. "/suite-runs"
      local out, code = cli({ timeout = 60 }, "eval", suite, "--backend", "fake", "--journal", r, "--skills", skills)
      expect(code):equals(2)
      expect(out):contains(c[2])
      expect(exists(r)):is_false()
    end
  end)

  it("refuses lineage files out of the spec's folder, by ../ or by a link", function()
    local d = tmp .. "/lin"
    sh("mkdir -p " .. q(d))
    write(tmp .. "/outside.cu", read(w .. "/v0.cu"))
    local spec = read(w .. "/workload.lua")
    sh("ln -s ../outside.cu " .. q(d .. "/v1.cu") .. " && cp " .. q(w .. "/v0.cu") .. " " .. q(d))
    for _, lineage in ipairs({ '"v0.cu", "../outside.cu"', '"v0.cu", "v1.cu"' }) do
      write(d .. "/workload.lua", (spec:gsub('lineage = { "v0.cu" }', "lineage = { " .. lineage .. " }")))
      local r = tmp .. "/lin-runs"
      local out, code = cli({ timeout = 60 }, "bench", d, "--backend", "fake", "--journal", r)
      expect(code):equals(2)
      expect(out):contains("lineage[2]")
      expect(out):contains("leads out of '" .. d .. "'")
      expect(exists(r)):is_false()
    end
  end)

  it("refuses a reference out of the spec's folder", function()
    local d = tmp .. "/ref"
    sh("mkdir -p " .. q(d) .. " && cp " .. q(w .. "/v0.cu") .. " " .. q(d))
    write(tmp .. "/outside_ref.c", "void saxpy_ref(void) {}\n")
    write(d .. "/workload.lua", (read(w .. "/workload.lua"):gsub('lineage = { "v0.cu" },', 'lineage = { "v0.cu" },\n  reference = "../outside_ref.c",')))
    local wl, f = require("klineage.workload").load(d .. "/workload.lua")
    expect(wl):is_nil()
    expect(f.message):contains("reference")
    expect(f.message):contains("'" .. d .. "/../outside_ref.c' leads out of '" .. d .. "'")
  end)
end)

describe("the lock of a run folder", function()
  local tmp = mkdtemp()
  local w, kernel, skills = workspace(tmp)
  local root = tmp .. "/runs"
  -- A process that holds a folder's lock as a command does, until killed.
  local holder = write(tmp .. "/holder.lua", [[
    local lock = assert(require("klineage.store.runlock").acquire(arg[1]))
    io.stdout:write("ready\n")
    io.stdout:flush()
    require("kl.proc").sleep(60)
  ]])
  local function hold(dir)
    sh("mkdir -p " .. q(dir))
    local p = assert(proc.spawn({ argv = { exe, "run", holder, dir } }))
    expect(p:read_line(30)):equals("ready")
    return p
  end

  it("refuses a second optimize on the folder, naming the holder's pid and command, exit 2; free once it dies", function()
    local p <close> = hold(root .. "/busy") -- killed however the test ends
    local out, code = cli({ timeout = 60 }, "optimize", kernel, "--workload", w, "--backend", "fake", "--skills", skills,
      "--journal", root, "--run", "busy", "--quiet")
    expect(code):equals(2)
    expect(out):contains(string.format("the folder '%s/busy' is in use by pid %d: %s run %s", root, p.pid, exe, holder))
    no_traceback(out)
    expect(exists(root .. "/busy/journal.jsonl")):is_false()
    p:kill("KILL")
    p:wait(10)
    -- the kernel dropped the lock with the process: nothing to clean up
    local out2, code2 = cli({ timeout = 90 }, "optimize", kernel, "--workload", w, "--backend", "fake", "--budget", "3", "--skills", skills,
      "--journal", root, "--run", "busy", "--quiet")
    expect(code2):equals(0)
    expect(out2):contains("optimized kernel: " .. root .. "/busy/optimized.cu")
  end)

  it("refuses a second eval on an eval's folder, before any unit is judged", function()
    local suite = tmp .. "/suite"
    sh("mkdir -p " .. q(suite .. "/t1") .. " && cp " .. q(w .. "/workload.lua") .. " " .. q(w .. "/v0.cu") .. " "
      .. q(suite .. "/t1/") .. " && cp " .. q(w .. "/v0.cu") .. " " .. q(suite .. "/t1/kernel.cu"))
    local p <close> = hold(root .. "/ev")
    local out, code = cli({ timeout = 60 }, "eval", suite, "--backend", "fake", "--journal", root, "--run", "ev",
      "--skills", skills, "--budget", "4", "--quiet")
    expect(code):equals(2)
    expect(out):contains(string.format("klineage eval: the folder '%s/ev' is in use by pid %d", root, p.pid))
    local h = io.popen("ls -A " .. q(root .. "/ev"))
    expect(h:read("a")):equals(".lock\n")
    h:close()
    p:kill("KILL")
    p:wait(10)
  end)

  it("refuses to regenerate a report into a folder a command holds", function()
    -- a finished run, then held as a command would hold it
    local made = select(2, cli({ timeout = 90 }, "optimize", kernel, "--workload", w, "--backend", "fake", "--budget", "3", "--skills", skills,
      "--journal", root, "--run", "rep", "--quiet"))
    expect(made):equals(0)
    local p <close> = hold(root .. "/rep")
    local out, code = cli({ timeout = 60 }, "report", root .. "/rep")
    expect(code):equals(2)
    expect(out):contains("is in use by pid " .. p.pid)
    p:kill("KILL")
    p:wait(10)
  end)
end)

describe("a stored kernel that no longer matches its hash", function()
  local tmp = mkdtemp()
  local w, kernel, skills = workspace(tmp)
  local root = tmp .. "/runs"
  local function optimize()
    return cli({ timeout = 90 }, "optimize", kernel, "--workload", w, "--backend", "fake", "--budget", "3", "--skills", skills,
      "--journal", root, "--run", "r", "--quiet")
  end
  local _, made = optimize()
  local src = root .. "/r/src/" .. require("kl.hash").sha256(read(kernel)) .. ".cu"
  local function swap() write(src, "// swapped in: not the kernel this run judged\n") end

  it("made the run (the fixture of the cases below)", function()
    expect(made):equals(0)
    expect(exists(src)):is_true()
  end)

  it("is refused by klineage report, not shown as genuine", function()
    swap()
    local out, code = cli({ timeout = 60 }, "report", root .. "/r")
    expect(code):equals(2)
    expect(out):contains("'" .. src .. "' does not match its SHA-256")
    no_traceback(out)
    expect(read(root .. "/r/report.md")):never_contains("swapped in")
  end)

  it("is refused by a resume, before anything is judged or appended", function()
    swap()
    local before = read(root .. "/r/journal.jsonl")
    local out, code = optimize()
    expect(code):equals(2)
    expect(out):contains("'" .. src .. "' does not match its SHA-256")
    expect(read(root .. "/r/journal.jsonl")):equals(before)
  end)
end)
