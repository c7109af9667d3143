-- Bad input, end to end through the klineage command: each case gets one
-- line that says why (no traceback), exit code 2 for bad input or usage and
-- 1 for a judged failure, and no journal line lost. The hostile files live
-- in tests/adversarial/cli/; the ones a file cannot hold (a FIFO, a device,
-- a path under a regular file, names with a quote or a newline, a full
-- disk) are made here in a temporary folder.
local testing = require "klineage.cli.testing"
local journal = require "klineage.store.journal"
local exe = require("kl.host").executable()
local q = testing.shell_quote

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local saxpy = here .. "/../fixtures/workloads/saxpy"
local sizes = here .. "/../fixtures/workloads/saxpy_sizes"
local hostile = here .. "/../adversarial/cli"

local mkdtemp, write, read = scratch_dir, write_file, read_file -- the runner's helpers



-- Runs klineage under sh with a time limit, from opts.cwd, with opts.env
-- set (false: unset) and opts.shell (sh commands: ulimit, trap) before it.
-- Returns the combined output and the exit code; 124 is the time limit.
local function cli(opts, ...)
  local parts = {}
  if opts.cwd then parts[#parts + 1] = "cd " .. q(opts.cwd) .. " &&" end
  if opts.shell then parts[#parts + 1] = opts.shell .. ";" end
  parts[#parts + 1] = "exec env"
  for k, v in pairs(opts.env or {}) do parts[#parts + 1] = v and q(k .. "=" .. v) or ("-u " .. q(k)) end
  parts[#parts + 1] = "timeout " .. tostring(opts.timeout or 60) .. " " .. q(exe)
  for _, a in ipairs({ ... }) do parts[#parts + 1] = q(a) end
  local h = io.popen("(" .. table.concat(parts, " ") .. ") 2>&1", "r")
  local out = h:read("a")
  local _, _, code = h:close()
  return out, code
end

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

local function no_traceback(out)
  expect(out):never_contains("stack traceback")
  expect(out):never_contains(".lua:") -- an engine frame or error position
end

-- The entries of a folder.
local function entries(dir)
  local h = io.popen("ls -A " .. q(dir))
  local names = {}
  for l in h:lines() do names[#names + 1] = l end
  h:close()
  return names
end

describe("klineage gate --kernel F, where F cannot be a kernel", function()
  local tmp = mkdtemp()
  local runs = tmp .. "/runs"
  local function gate(kernel, opts)
    opts = opts or {}
    return cli(opts, "gate", saxpy, "--backend", "fake", "--journal", runs, "--kernel", kernel)
  end
  -- Refused before a run exists: one line, exit 2, and no run folder.
  local function refused(out, code, line)
    expect(code):equals(2)
    expect(out):contains("\nklineage gate: " .. line .. "\n")
    no_traceback(out)
    local made = io.open(runs, "rb")
    if made then
      made:close()
      expect(#entries(runs)):equals(0)
    end
  end

  it("refuses a missing file", function()
    local out, code = gate(tmp .. "/missing.cu")
    refused(out, code, "cannot open '" .. tmp .. "/missing.cu': No such file or directory")
  end)
  it("refuses a directory", function()
    local out, code = gate(tmp)
    refused(out, code, "cannot read '" .. tmp .. "': a directory, not a regular file")
  end)
  it("refuses a binary file", function()
    local out, code = gate(hostile .. "/binary.cu")
    refused(out, code, "'" .. hostile .. "/binary.cu' is a binary file (NUL byte at offset 38), not CUDA source")
  end)
  it("refuses an unreadable path (under a regular file: chmod 000 does not stop root)", function()
    local file = write(tmp .. "/plain.cu", "// a regular file\n")
    local out, code = gate(file .. "/k.cu")
    refused(out, code, "cannot open '" .. file .. "/k.cu': Not a directory")
  end)
  it("refuses a FIFO at once instead of blocking on it", function()
    assert(os.execute("mkfifo " .. q(tmp .. "/fifo.cu")))
    local out, code = gate(tmp .. "/fifo.cu", { timeout = 20 })
    refused(out, code, "cannot read '" .. tmp .. "/fifo.cu': a FIFO, not a regular file")
  end)
  it("refuses /dev/zero instead of reading it until memory runs out", function()
    -- the memory cap keeps the machine safe from an engine that reads it
    local out, code = gate("/dev/zero", { shell = MEMORY_CAP, timeout = 30 })
    refused(out, code, "cannot read '/dev/zero': a character device, not a regular file")
  end)
  it("refuses a source over the 4 MiB limit", function()
    local big = write(tmp .. "/big.cu", "//" .. string.rep("x", 4 * 1024 * 1024) .. "\n")
    local out, code = gate(big)
    refused(out, code, "cannot read '" .. big .. "': 4194307 bytes, over the 4 MiB limit of a source file")
  end)
  it("judges a bench's unreadable lineage files as bad_input rows, with the reason, journaled", function()
    local dir = tmp .. "/lineage"
    assert(os.execute("mkdir -p " .. q(dir)))
    write(dir .. "/v0.cu", read(sizes .. "/v0.cu"))
    write(dir .. "/v1.cu", "// v1\n\0 binary\n")
    -- a FIFO inside the folder: a link to /dev/zero leads out of it, and
    -- the spec is refused whole (hostile_files_spec)
    assert(os.execute("mkfifo " .. q(dir .. "/v2.cu")))
    write(dir .. "/workload.lua", (read(sizes .. "/workload.lua"):gsub("bench_params = [^\n]*\n", "")
      :gsub('lineage = { "v0.cu", "v1.cu" }', 'lineage = { "v0.cu", "v1.cu", "v2.cu" }')))
    local out, code = cli({ shell = MEMORY_CAP, timeout = 60 }, "bench", dir, "--backend", "fake",
      "--max-seconds", "0.05", "--journal", tmp .. "/bench-runs")
    expect(code):equals(0)
    no_traceback(out)
    expect(out):matches("\nv0%.cu%s+ok")
    expect(out):contains("\nv1.cu                      bad_input")
    expect(out):contains("\n  '" .. dir .. "/v1.cu' is a binary file (NUL byte at offset 6), not CUDA source\n")
    expect(out):contains("\nv2.cu                      bad_input")
    expect(out):contains("\n  cannot read '" .. dir .. "/v2.cu': a FIFO, not a regular file\n")
    local run_dir = out:match("run (%S+)\n")
    local verdicts = {}
    for _, r in ipairs(assert(journal.read(run_dir .. "/journal.jsonl"))) do
      if r.kind == "evaluation" then verdicts[r.candidate.label] = r.verdict end
    end
    expect(verdicts):equals({ ["v0.cu"] = "ok", ["v1.cu"] = "bad_input", ["v2.cu"] = "bad_input" })
  end)
  it("exits 2 on a judged bad_input (a malformed annotation), with the reason", function()
    local k = write(tmp .. "/slash.cu", read(saxpy .. "/v0.cu"):gsub("cdiv%(n, BLOCK%)", "n / BLOCK"))
    local out, code = gate(k)
    expect(code):equals(2)
    expect(out):matches("\n  correct  bad_input%s+[^\n]*use cdiv%(a, b%)")
    no_traceback(out)
  end)
  os.execute("rm -rf " .. q(tmp))
end)

describe("klineage options", function()
  local k = saxpy .. "/v0.cu"
  it("says an option lacks its value when the next word is an option", function()
    local out, code = cli({}, "compile", k, "--arch", "--foo")
    expect(code):equals(2)
    expect(out):equals("klineage compile: option '--arch' needs a value, got the option '--foo' "
      .. "(write --arch=VALUE for a value that starts with '-')\n")
  end)
  it("refuses an arch that is not sm_XX or compute_XX in one line", function()
    local out, code = cli({}, "compile", k, "--arch", "gfx90a")
    expect(code):equals(2)
    expect(out):equals("klineage compile: --arch needs sm_XX or compute_XX (sm_90, compute_90), got 'gfx90a'\n")
  end)
  it("refuses an arch or an option NVRTC does not know, as a usage error", function()
    local out, code = cli({}, "compile", k, "--arch", "sm_12")
    expect(code):equals(2)
    expect(out):equals("klineage compile: nvrtc: error: invalid value for --gpu-architecture (-arch)\n")
    out, code = cli({}, "compile", k, "--option=--no-such-option")
    expect(code):equals(2)
    expect(out):contains("unrecognized option --no-such-option")
    no_traceback(out)
  end)
  it("passes every --option, as its help says (repeatable)", function()
    local tmp = mkdtemp()
    local src = write(tmp .. "/needs_both.cu",
      "#if !defined(KL_A) || !defined(KL_B)\n#error both options are needed\n#endif\n"
      .. 'extern "C" __global__ void k(float *o) { o[0] = KL_A + KL_B; }\n')
    local out, code = cli({}, "compile", src, "--option=-DKL_A=1", "--option", "-DKL_B=2")
    os.execute("rm -rf " .. q(tmp))
    expect(code):equals(0)
    expect(out):matches("\n  k%s+%d+")
  end)
  it("refuses a FIFO as a script or a spec file, at once", function()
    local tmp = mkdtemp()
    assert(os.execute("mkfifo " .. q(tmp .. "/s.lua")))
    local out, code = cli({ timeout = 20 }, "run", tmp .. "/s.lua")
    expect(code):equals(2)
    expect(out):equals("klineage run: cannot read '" .. tmp .. "/s.lua': a FIFO, not a regular file\n")
    out, code = cli({ timeout = 20 }, "test", tmp .. "/s.lua")
    expect(code):equals(2)
    expect(out):equals("klineage test: cannot read '" .. tmp .. "/s.lua': a FIFO, not a regular file\n")
    os.execute("rm -rf " .. q(tmp))
  end)
  it("runs a script that starts with a #! line, with its line numbers", function()
    local tmp = mkdtemp()
    local script = write(tmp .. "/s.lua", "#!/usr/bin/env klineage run\nlocal x = 1\nerror('on line 3')\n")
    local out, code = cli({}, "run", script)
    os.execute("rm -rf " .. q(tmp))
    expect(code):equals(1)
    expect(out):contains(script .. ":3: on line 3")
  end)
  it("leaves a script's --help to the script", function()
    local tmp = mkdtemp()
    local script = write(tmp .. "/s.lua", "print(table.concat(arg, ' '))\n")
    local out, code = cli({}, "run", script, "--help", "x")
    os.execute("rm -rf " .. q(tmp))
    expect(code):equals(0)
    expect(out):equals("--help x\n")
  end)
  it("names the allowed backends for an unknown one", function()
    local out, code = cli({}, "gate", saxpy, "--backend", "bogus", "--journal", os.tmpname() .. ".d")
    expect(code):equals(2)
    expect(out):contains("\nklineage gate: unknown backend 'bogus' (cuda, emu, fake)\n")
    out, code = cli({}, "worker", "--backend", "bogus")
    expect(code):equals(2)
    expect(out):equals("klineage worker: unknown backend 'bogus' (cuda, emu, fake)\n")
  end)
end)

describe("klineage help", function()
  -- For every command: the options its help lists are exactly those its
  -- parser takes (the module's flags), its usage line names each, and
  -- each is known to the parser (never "unknown option").
  local cli_mod = require "klineage.cli"
  for _, name in ipairs(cli_mod.commands) do
    local cmd = cli_mod.load_command(name)
    if cmd.flags then
      it("lists exactly the options of " .. name, function()
        local help = cli({}, "help", name)
        local listed, want = {}, {}
        for opt in ("\n" .. help):match("\noptions:\n(.*)$"):gmatch("\n?  (%-%-[%w%-]+)") do listed[#listed + 1] = opt end
        for flag in pairs(cmd.flags) do want[#want + 1] = "--" .. flag:gsub("_", "-") end
        table.sort(listed)
        table.sort(want)
        expect(listed):equals(want)
        local usage = help:match("^(.-)\n\n")
        for _, opt in ipairs(want) do
          if not usage:find("[" .. opt .. "]", 1, true) and not usage:find("[" .. opt .. " ", 1, true)
            and not usage:find(" " .. opt .. " ", 1, true) then
            fail("the usage of %s does not name %s: %s", name, opt, usage)
          end
          local out = cli({}, name, opt, "--no-such-option")
          expect(out):contains("--no-such-option")
          expect(out):never_contains("unknown option '" .. opt .. "'")
        end
      end)
    end
  end
  it("lists every command and the top-level options in --help, and each works", function()
    local out, code = cli({}, "--help")
    expect(code):equals(0)
    for _, name in ipairs(cli_mod.commands) do expect(out):matches("\n  " .. name .. " ") end
    expect(out):matches("\n  %-%-help, %-h ")
    expect(out):matches("\n  %-%-version ")
    expect((cli({}, "-h"))):equals(out)
    local v, vcode = cli({}, "--version")
    expect(vcode):equals(0)
    expect(v):equals((cli({}, "version")))
  end)
end)

describe("the runs folder", function()
  it("says in one line, exit 2, when --journal cannot be made (a path under a file)", function()
    local tmp = mkdtemp()
    local file = write(tmp .. "/plain", "x")
    for _, cmd in ipairs({ "gate", "bench" }) do
      local out, code = cli({}, cmd, saxpy, "--backend", "fake", "--journal", file .. "/runs")
      expect(code):equals(2)
      expect(out):matches("\nklineage " .. cmd .. ": cannot open the journal in " .. file:gsub("%p", "%%%0")
        .. "/runs/[%w%-]+: cannot create '[^']+': Not a directory\n$")
      no_traceback(out)
    end
    os.execute("rm -rf " .. q(tmp))
  end)
  it("writes nothing to the current folder, even with no HOME", function()
    local tmp = mkdtemp()
    local cwd = tmp .. "/cwd"
    assert(os.execute("mkdir " .. q(cwd)))
    local env = { HOME = false, KLINEAGE_CACHE = false, XDG_CACHE_HOME = false, KLINEAGE_RUNS = false,
                  XDG_STATE_HOME = false }
    local out, code = cli({ cwd = cwd, env = env }, "gate", saxpy, "--backend", "fake", "--journal", tmp .. "/runs")
    expect(code):equals(0)
    expect(out):contains("ok")
    expect(entries(cwd)):equals({})
    os.execute("rm -rf " .. q(tmp))
  end)
end)

describe("a journal that cannot be written mid-run (a full disk)", function()
  -- RLIMIT_FSIZE is a real write failure: past the limit write() fails
  -- with EFBIG, as on a full disk it fails with ENOSPC (SIGXFSZ ignored).
  -- sh counts ulimit -f in 512-byte blocks (bash in 1024): either way the
  -- run record fits and the whole journal does not.
  local tmp = mkdtemp()
  local cache = tmp .. "/cache"
  local dir = tmp .. "/w"
  assert(os.execute("mkdir -p " .. q(dir)))
  local v0 = read(sizes .. "/v0.cu")
  local names = {}
  for i = 0, 3 do
    write(dir .. "/v" .. i .. ".cu", "// version " .. i .. "\n" .. v0)
    names[#names + 1] = string.format("%q", "v" .. i .. ".cu")
  end
  write(dir .. "/workload.lua", (read(sizes .. "/workload.lua"):gsub("bench_params = [^\n]*\n", "")
    :gsub('lineage = { "v0.cu", "v1.cu" }', "lineage = { " .. table.concat(names, ", ") .. " }")))
  local full = { shell = "trap '' XFSZ; ulimit -f 12", env = { KLINEAGE_CACHE = cache } }

  it("bench prints every row judged, says why it stopped, exits 1, and resumes", function()
    local root = tmp .. "/runs"
    local out, code = cli(full, "bench", dir, "--backend", "fake", "--max-seconds", "0.05", "--journal", root)
    expect(code):equals(1)
    no_traceback(out)
    local stop = out:match("\nklineage bench: stopped, io_error: cannot append to the journal: File too large %(([^\n]*)%)\n")
    if not stop then fail("no line says why the bench stopped:\n%s", out) end
    local lost = stop:match(", (v%d%.cu) not journaled")
    expect(lost):exists()
    local run_dir = stop:match("resume with %-%-resume (%S+)$")
    expect(run_dir):exists()
    local journaled = {}
    for _, r in ipairs(assert(journal.read(run_dir .. "/journal.jsonl"))) do
      if r.kind == "evaluation" then journaled[#journaled + 1] = r.candidate.label end
    end
    expect(#journaled):at_least(1)
    expect(#journaled):at_most(3)
    -- every version in the journal has its row, and so has the one the
    -- failure interrupted; none after it was judged
    for _, label in ipairs(journaled) do expect(out):matches("\n" .. label:gsub("%.", "%%.") .. "%s+ok") end
    expect(out):matches("\n" .. lost:gsub("%.", "%%.") .. "%s+ok")
    expect(lost):equals("v" .. #journaled .. ".cu")
    expect(out):never_contains("expert") -- no figures for a table that stopped
    -- resumed with room: nothing journaled is judged again, the table is whole
    out, code = cli({ env = { KLINEAGE_CACHE = cache } }, "bench", dir, "--backend", "fake", "--max-seconds", "0.05",
      "--resume", run_dir)
    expect(code):equals(0)
    for i = 0, 3 do expect(out):matches("\nv" .. i .. "%.cu%s+ok") end
    local seen = {}
    for _, r in ipairs(assert(journal.read(run_dir .. "/journal.jsonl"))) do
      if r.kind == "evaluation" then
        if seen[r.key] then fail("%s was journaled twice", r.candidate.label) end
        seen[r.key] = true
      end
    end
  end)
  it("gate says the verdict, and that its record is not in the journal, and exits 1", function()
    local out, code = cli({ shell = "trap '' XFSZ; ulimit -f 4", env = { KLINEAGE_CACHE = cache } },
      "gate", dir, "--backend", "fake", "--journal", tmp .. "/runs2")
    expect(code):equals(1)
    no_traceback(out)
    expect(out):contains("\nklineage gate: the record is not in the journal: io_error: cannot append to the journal: File too large\n")
    expect(out):matches("v3%.cu on fake[^\n]*: ok\n")
  end)
  os.execute("rm -rf " .. q(tmp))
end)

describe("compile errors that hid their cause", function()
  it("shows ptxas's own error for a 64 MB static __shared__ array", function()
    local file = hostile .. "/big_static_smem.cu"
    local out, code = cli({}, "compile", file)
    expect(code):equals(1)
    expect(out:match("^[^\n]*")):equals(file .. ": ptxas error   : Entry function 'saxpy' uses too much shared data "
      .. "(0x4000000 bytes, 0xc000 max)")
    out, code = cli({}, "gate", saxpy, "--backend", "fake", "--journal", os.tmpname() .. ".d", "--kernel", file)
    expect(code):equals(1)
    expect(out):matches("\n  compile  compile_error%s+[^\n]*uses too much shared data")
  end)
  it("keeps a compile error on one line when the path holds a newline and a quote", function()
    local tmp = mkdtemp()
    local path = write(tmp .. '/new\nli"ne.cu', 'extern "C" __global__ void k(float *o) {\n  o[0] = nope;\n}\n')
    local out, code = cli({}, "compile", path)
    os.execute("rm -rf " .. q(tmp))
    expect(code):equals(1)
    expect(out:match("^[^\n]*")):equals(tmp .. '/new\\nli"ne.cu:2:10: error: identifier "nope" is undefined')
  end)
end)

describe("kernel paths with a quote or a newline on emu", function()
  local emu = require "klineage.device.emu"
  local good = 'extern "C" __global__ void k(float *o) { o[threadIdx.x] = 1.0f; }\n'
  local bad = 'extern "C" __global__ void k(float *o) {\n  o[0] = nope;\n}\n'
  for _, name in ipairs({ 'q"uote.cu', "new\nline.cu", "back\\slash.cu" }) do
    it(string.format("compiles a correct kernel named %q, and names it readably in errors", name), function()
      local m, err = emu.compile(good, { name = name })
      if not m then fail("%s", tostring(err)) end
      m:close()
      local _, berr = emu.compile(bad, { name = name })
      expect(berr.verdict):equals("compile_error")
      expect(berr.message:match("^[^:]*")):equals(require("klineage.base.files").display(name) .. "")
    end)
  end
  it("judges a correct kernel at such a path ok through the gate", function()
    local tmp = mkdtemp()
    local path = write(tmp .. '/q"uo\nte.cu', read(saxpy .. "/v0.cu"))
    local out, code = cli({}, "gate", saxpy, "--backend", "emu", "--journal", tmp .. "/runs", "--kernel", path)
    os.execute("rm -rf " .. q(tmp))
    expect(code):equals(0)
    expect(out):contains(tmp .. '/q"uo\\nte.cu on ')
  end)
end)

describe("FIFOs where a workload's files should be", function()
  it("a FIFO workload.lua is no workload, and does not block", function()
    local tmp = mkdtemp()
    assert(os.execute("mkfifo " .. q(tmp .. "/workload.lua")))
    local out, code = cli({ timeout = 20 }, "gate", tmp, "--backend", "fake", "--journal", tmp .. "/runs")
    expect(code):equals(2)
    expect(out):contains("no workload")
    os.execute("rm -rf " .. q(tmp))
  end)
  it("a FIFO lineage file is a bad_input row, and does not block", function()
    local tmp = mkdtemp()
    write(tmp .. "/v0.cu", read(saxpy .. "/v0.cu"))
    assert(os.execute("mkfifo " .. q(tmp .. "/v1.cu")))
    write(tmp .. "/workload.lua", (read(saxpy .. "/workload.lua"):gsub('lineage = { "v0.cu" }', 'lineage = { "v0.cu", "v1.cu" }')))
    local out, code = cli({ timeout = 60 }, "bench", tmp, "--backend", "fake", "--max-seconds", "0.05", "--journal", tmp .. "/runs")
    expect(code):equals(0)
    expect(out):matches("\nv1%.cu%s+bad_input")
    expect(out):contains("a FIFO, not a regular file")
    os.execute("rm -rf " .. q(tmp))
  end)
end)

describe("a workload spec that fails while it loads", function()
  it("is one line, exit 2, for a spec whose table traps every field", function()
    local tmp = mkdtemp()
    write(tmp .. "/workload.lua",
      'return setmetatable({}, { __index = function(_, k) error("trap " .. tostring(k)) end })\n')
    for _, cmd in ipairs({ "gate", "bench" }) do
      local out, code = cli({}, cmd, tmp, "--backend", "fake", "--journal", tmp .. "/runs")
      expect(code):equals(2)
      expect(out):matches("^klineage " .. cmd .. ": [^\n]*metatable[^\n]*\n$")
    end
    os.execute("rm -rf " .. q(tmp))
  end)
  it("is one line, exit 2, for a spec that raises", function()
    local tmp = mkdtemp()
    write(tmp .. "/workload.lua", 'error("no spec here")\n')
    local out, code = cli({}, "gate", tmp, "--backend", "fake")
    os.execute("rm -rf " .. q(tmp))
    expect(code):equals(2)
    expect(out):matches("^klineage gate: [^\n]*no spec here\n$")
  end)
end)
