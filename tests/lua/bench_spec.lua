-- `klineage bench` on the fake backend: the table's sizes, same-size
-- ratios, the workload's rate, and the figure lines scripts read.
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local fixture = here .. "/../fixtures/workloads/saxpy_sizes"

describe("klineage bench", function()
  local out, code = klineage("bench", fixture, "--backend", "fake", "--max-seconds", "0.05", "--journal", os.tmpname() .. ".d")

  it("prints one row per version and one per extra bench size", function()
    expect(code):equals(0)
    expect(out):matches("\nv0%.cu%s+ok")
    expect(out):matches("\nv1%.cu%s+ok")
    expect(out):matches("\n  n=5000%s+ok")
    -- v1's requires refuses n = 5000: said, and no ratio invented for it
    expect(out):matches("\n  n=5000%s+not_allowed%s+%-")
  end)

  it("adds the workload's rate as a column and a figure", function()
    expect(out):contains("Mel/s")
    expect(out):matches("saxpy_sizes%-expert%-rate: [%d.]+ Mel/s\n")
  end)

  it("ends with figure lines", function()
    expect(out):matches("saxpy_sizes%-v0%-time: [%d.]+ ms\n")
    expect(out):matches("saxpy_sizes%-expert%-speedup%-over%-v0: [%d.]+ x\n$")
  end)
end)

describe("klineage bench with a broken annotation", function()
  it("reports the version's verdict instead of crashing", function()
    local dir = os.tmpname() .. ".d"
    assert(os.execute("mkdir -p '" .. dir .. "' && cp '" .. fixture .. "'/* '" .. dir .. "'/"))
    local h = assert(io.open(dir .. "/v1.cu", "w"))
    h:write("// v1: broken\n// @kl launch grid(n / 1024) block(256)\n",
      "extern \"C\" __global__ void saxpy(int n, float a, const float *x, float *y) {}\n")
    h:close()
    local out, code = klineage("bench", dir, "--backend", "fake", "--max-seconds", "0.05", "--journal", dir .. "/runs")
    expect(code):equals(0)
    expect(out):matches("\nv1%.cu%s+bad_input")
    expect(out):contains("use cdiv(a, b)")
  end)
end)

describe("klineage bench, killed and resumed", function()
  it("judges nothing twice: the resumed run reads the judged versions back from the journal", function()
    local proc = require "kl.proc"
    local journal = require "klineage.store.journal"
    local dir = os.tmpname() .. ".d"
    local root = dir .. "/runs"
    assert(os.execute("mkdir -p '" .. root .. "'"))
    local src = assert(io.open(fixture .. "/v0.cu")):read("a"):gsub("void saxpy%(", "void saxpy_slow(")
    local names = {}
    for i = 0, 3 do
      names[#names + 1] = string.format("%q", "v" .. i .. ".cu")
      local h = assert(io.open(dir .. "/v" .. i .. ".cu", "w"))
      h:write("// version ", i, "\n", src)
      h:close()
    end
    local h = assert(io.open(dir .. "/workload.lua", "w"))
    local spec = ([[
return {
  name = "slow", kernel = "saxpy_slow", params = { n = 4096, a = 2.0 },
  test_params = { { n = 1000 }, { n = 333 } },
  buffers = { x = { "f32", "n", init = "uniform" }, y = { "f32", "n", init = "normal", output = true } },
  args = { "n", "a", "x", "y" }, tolerance = { rtol = 1e-6, atol = 1e-7 },
  flops = "2*n", bytes = "12*n", lineage = { LINEAGE },
}
]]):gsub("LINEAGE", table.concat(names, ", "))
    h:write(spec)
    h:close()
    local argv = { require("kl.host").executable(), "bench", dir, "--backend", "fake", "--max-seconds", "0.05", "--journal", root }
    local p = assert(proc.spawn({ argv = argv }))
    -- Kill it once the journal holds its first evaluation, mid-run.
    local path
    for _ = 1, 3000 do
      local ls = io.popen("ls '" .. root .. "'")
      local id = ls:read("l")
      ls:close()
      if id then
        path = root .. "/" .. id .. "/journal.jsonl"
        local recs = journal.read(path) or {}
        local n = 0
        for _, r in ipairs(recs) do if r.kind == "evaluation" then n = n + 1 end end
        if n >= 1 then break end
      end
      proc.sleep(0.01)
    end
    p:kill("KILL")
    p:wait(10)
    p:close()
    local before = {}
    for _, r in ipairs(assert(journal.read(path))) do
      if r.kind == "evaluation" then before[#before + 1] = r.key end
    end
    expect(#before):at_least(1)
    expect(#before):at_most(3) -- killed before the end
    local run_dir = path:match("^(.*)/journal.jsonl$")
    local out, code = klineage("bench", dir, "--backend", "fake", "--max-seconds", "0.05", "--journal", root, "--resume", run_dir)
    expect(code):equals(0)
    for i = 0, 3 do expect(out):matches("\nv" .. i .. "%.cu%s+ok") end
    local keys, charged = {}, 0
    for _, r in ipairs(assert(journal.read(path))) do
      if r.kind == "evaluation" then
        if keys[r.key] then fail("%s was judged twice", r.candidate.label) end
        keys[r.key] = true
        if r.charged then charged = charged + 1 end
      end
    end
    expect(charged):equals(4)
    for _, k in ipairs(before) do expect(keys[k]):is_true() end
  end)
end)

describe("klineage bench, the progress line", function()
  -- The bench's own process, its stderr a pipe (never a terminal), with
  -- env's words before it.
  local testing = require "klineage.cli.testing"
  local function bench(env)
    local cmd = "env " .. env .. " " .. testing.shell_quote(require("kl.host").executable()) .. " bench "
      .. testing.shell_quote(fixture) .. " --backend fake --max-seconds 0.05 --budget 30 --journal "
      .. testing.shell_quote(scratch_dir()) .. " 2>&1"
    local h = assert(io.popen(cmd, "r"))
    local out = h:read("a")
    local _, _, code = h:close()
    return out, code
  end

  it("writes nothing of the sort when stderr is not a terminal, nor with KLINEAGE_PROGRESS=0", function()
    for _, env in ipairs({ "-u KLINEAGE_PROGRESS", "KLINEAGE_PROGRESS=0" }) do
      local out, code = bench(env)
      expect(code):equals(0)
      expect(out):matches("\nv1%.cu%s+ok")
      expect(out):never_contains("\r")
      expect(out):never_contains("\27[")
      expect(out):never_contains("cycles 1/30")
    end
  end)

  it("with KLINEAGE_PROGRESS=1: the version judged, the fastest so far, the cycles of the budget, the time; cut to $COLUMNS", function()
    local out, code = bench("-u COLUMNS KLINEAGE_PROGRESS=1")
    expect(code):equals(0)
    expect(out):contains("\r\27[Kbench saxpy_sizes: v0.cu (1/2) ...  cycles 0/30  0 s")
    expect(out):matches("\r\27%[Kbench saxpy_sizes: v1%.cu %(2/2%) ok  fastest v[01]%.cu [%d.]+ ms  cycles 2/30  %d+ s")
    -- erased before each row of the table: between the last progress text
    -- and the row stands a clear
    for _, row in ipairs({ "v0%.cu%s+ok", "v1%.cu%s+ok" }) do
      local at = assert(out:find(row))
      local before = out:sub(1, at)
      local last_text = before:match(".*()cycles %d+/30")
      local last_clear = before:match(".*()\r\27%[K")
      check(last_text and last_clear and last_clear > last_text, "no clear between the progress line and the row %s", row)
    end
    -- and at the end
    expect(out):matches("cycles 2/30  %d+ s\r\27%[Kklineage bench: report")
    local narrow = bench("COLUMNS=40 KLINEAGE_PROGRESS=1")
    local n = 0
    -- each progress text runs from a clear to the next \r (stdout's rows
    -- may follow a clear too: they hold no "cycles")
    for shown in narrow:gmatch("\r\27%[K([^\r\n]*)") do
      if shown:find("cycles", 1, true) then
        n = n + 1
        check(#shown <= 39, "a progress line wider than COLUMNS=40 allows: %q", shown)
      end
    end
    expect(n):at_least(4)
    expect(narrow):matches("%.%.%.  cycles %d+/30  %d+ s") -- cut, the cycles and the time kept
  end)
end)
