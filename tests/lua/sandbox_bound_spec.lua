-- Sandboxed Lua that would hang the engine in C, met through the commands
-- that load it: a workload spec (gate), a skill file (skills list), a spec
-- a journal names (report), and a C loop no guard knows (the watchdog).
-- Each command must come back, in one line that says why. The commands run
-- under `timeout` (a generous cap), so a hang fails the test instead of
-- holding it; KLINEAGE_SANDBOX_SECONDS makes the time limit small.
local cjson = require "cjson"
local testing = require "klineage.cli.testing"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local specs = here .. "/../adversarial/specs"
local CAP = 120 -- seconds; exit code 124 when a command runs past it

-- Runs the klineage binary with extra environment; returns output, code.
local function klineage_env(env, ...)
  local parts = { "timeout", tostring(CAP), "env" }
  for k, v in pairs(env) do parts[#parts + 1] = testing.shell_quote(k .. "=" .. v) end
  parts[#parts + 1] = testing.shell_quote(require("kl.host").executable())
  for _, a in ipairs({ ... }) do parts[#parts + 1] = testing.shell_quote(a) end
  local h = io.popen(table.concat(parts, " ") .. " 2>&1", "r")
  local out = h:read("a")
  local _, _, code = h:close()
  return out, code
end

local function one_line(out)
  expect(select(2, out:gsub("\n", ""))):equals(1)
  expect(out:sub(-1)):equals("\n")
end

describe("klineage gate: a spec that loops in C", function()
  it("table.remove over what __len claims ends at the instruction limit", function()
    local out, code = klineage_env({}, "gate", specs .. "/len_remove", "--backend", "fake", "--journal", scratch_dir())
    expect(code):equals(2)
    one_line(out)
    expect(out):contains("klineage gate: " .. specs .. "/len_remove/workload.lua: exceeded the instruction limit of 100000000"
      .. " (workload.LIMITS.chunk.instructions)")
  end)

  it("reads slow per instruction end at the time limit", function()
    local out, code = klineage_env({ KLINEAGE_SANDBOX_SECONDS = "1" }, "gate", specs .. "/index_chain", "--backend", "fake",
      "--journal", scratch_dir())
    expect(code):equals(2)
    one_line(out)
    expect(out):contains("index_chain/workload.lua: exceeded the time limit of 1 s (workload.LIMITS.chunk.seconds)")
  end)
end)

describe("klineage skills list: a skill file that loops in C", function()
  it("string.rep of the empty string 2^63 - 1 times comes back; the file is named as bad", function()
    local dir = scratch_dir()
    write_file(dir .. "/hostile.lua", 'local pad = (""):rep(0x7fffffffffffffff)\n'
      .. 'return { schema = 1, id = "hostile" .. pad, intent = ("a"):rep(40):find(("a*"):rep(40) .. "b") }\n')
    local out, code = klineage_env({}, "skills", "list", "--dir", dir)
    expect(code):equals(2)
    one_line(out)
    expect(out):contains(dir .. "/hostile.lua: raised: ")
    expect(out):contains("string.find: a pattern with 40 repetitions over 40 characters")
  end)
end)

describe("klineage report: a journal that names a hostile spec", function()
  it("renders without the spec, which does not load", function()
    local root = scratch_dir()
    assert(os.execute(string.format("tar xzf '%s/../fixtures/report/bench-reduction-emu.tar.gz' -C '%s'", here, root)))
    local dir = root .. "/bench-reduction-emu"
    local lines = {}
    for line in io.lines(dir .. "/journal.jsonl") do lines[#lines + 1] = line end
    local first = cjson.decode(lines[1])
    first.specs[1].path = specs .. "/index_chain/workload.lua"
    first.specs[1].name = specs .. "/index_chain"
    lines[1] = cjson.encode(first)
    write_file(dir .. "/journal.jsonl", table.concat(lines, "\n") .. "\n")
    local out, code = klineage_env({ KLINEAGE_SANDBOX_SECONDS = "1" }, "report", dir)
    expect(code):equals(0)
    expect(out):equals(dir .. "/report.md\n" .. dir .. "/report.html\n")
    expect(read_file(dir .. "/report.md")):contains("The workload's spec does not load here")
  end)
end)

describe("the watchdog: a C loop that no guard knows", function()
  it("ends the process past the time limit, with one line and exit code 2", function()
    -- the engine hands the spec the real string.rep, unguarded
    local script = scratch_file([[
      local sandbox = require "klineage.workload.spec_sandbox"
      local sb = sandbox.new("the test's spec")
      local limits = { instructions = 1e9, memory = 1 << 24 }
      local _, chunk = sb:call(limits, load, "local rep = ... return rep('', math.maxinteger)", "=spec", "t", sb.env)
      sb:call(limits, chunk, string.rep)
      print("came back")
    ]], ".lua")
    local out, code = klineage_env({ KLINEAGE_SANDBOX_SECONDS = "1" }, "run", script)
    expect(code):equals(2)
    expect(out):equals("klineage: stopped: the test's spec ran past its time limit of 1 s inside a C function that cannot be "
      .. "interrupted (KLINEAGE_SANDBOX_SECONDS changes the limit)\n")
  end)
end)
