-- The emu worker's sandbox, through the real gate: each kernel of
-- tests/adversarial/emu_escape hides host code under #ifdef KL_EMU (NVRTC
-- never sees it) that runs a command, forks, opens a socket, writes a file
-- (at a launch, or when its library is loaded) or kills its own worker.
-- Sandboxed, each is the verdict fault with a line that says the sandbox
-- stopped it, nothing it tried happened, and a correct kernel passes right
-- after on a fresh worker. With the sandbox off, each gets through: that is
-- what the sandbox catches.
local gate = require "klineage.gate"
local workload = require "klineage.workload"
local pool_mod = require "klineage.worker.pool"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local fixtures = here .. "/../fixtures/workloads"
local escapes = here .. "/../adversarial/emu_escape"

local marks = os.tmpname()
os.remove(marks)
assert(os.execute("mkdir -m 0700 '" .. marks .. "'"))
local mark = marks .. "/mark"

local function exists(path)
  local h = io.open(path, "rb")
  if h then h:close() end
  return h ~= nil
end

-- file, the mark it leaves when it gets through, what the stopped record says
local CASES = {
  { "system.cu", ".system", "sandbox" },
  { "fork.cu", ".fork", "starts a new process" },
  { "socket.cu", ".socket", "opens or uses a socket" },
  { "fopen_write.cu", ".fopen", "opens a file for writing" },
  { "constructor.cu", ".constructor", "during 'load'" },
  { "self_kill.cu", nil, "reads as a kill from outside" },
}

local w = assert(workload.load(fixtures .. "/saxpy"))

local function context(env)
  env.KL_ESCAPE_MARK = mark
  local pool = assert(pool_mod.new { backend = "emu", timeout = 120, env = env })
  return assert(require("klineage.context").new { journal = false, pool = pool }), pool
end

describe("the emu sandbox, through the gate", function()
  local ctx, pool = context({})
  it("confines the worker", function()
    expect(assert(pool:device(1)) and pool.workers[1].hello.sandbox):equals("seccomp")
  end)
  for _, case in ipairs(CASES) do
    local file, suffix, says = case[1], case[2], case[3]
    it("stops " .. file .. ": fault, the sandbox's line, nothing done; then judges a correct kernel", function()
      local r = gate.evaluate(ctx, { file = escapes .. "/" .. file }, w)
      expect(r.verdict):equals("fault")
      expect(r.blame):equals("candidate")
      local c = r.stages.correct
      expect(c.signal):equals("SIGSYS")
      expect(c.message):contains("killed by SIGSYS")
      expect(c.message):contains("klineage sandbox")
      expect(c.message):contains(says)
      if suffix then expect(exists(mark .. suffix)):is_false() end
      local again = gate.evaluate(ctx, { file = fixtures .. "/saxpy/v0.cu" }, w)
      expect(again.verdict):equals("ok")
    end)
  end
  it("names the call and why in the line, when the kernel had not blocked SIGSYS", function()
    local r = gate.evaluate(ctx, { file = escapes .. "/socket.cu" }, w)
    expect(r.stages.correct.message):contains("klineage sandbox: the kernel called socket (syscall")
  end)
  ctx:close(); pool:close()
end)

describe("the emu escapes, with the sandbox off", function()
  local ctx, pool = context({ KLINEAGE_EMU_SANDBOX = "off" })
  it("says so in the worker's hello", function()
    expect(assert(pool:device(1)) and pool.workers[1].hello.sandbox):equals("off")
  end)
  for _, case in ipairs(CASES) do
    local file, suffix = case[1], case[2]
    if suffix then
      it(file .. " gets through: ok, and its mark is there", function()
        local r = gate.evaluate(ctx, { file = escapes .. "/" .. file }, w)
        expect(r.verdict):equals("ok")
        expect(exists(mark .. suffix)):is_true()
      end)
    end
  end
  it("self_kill.cu passes for the engine's fault: worker_lost", function()
    local r = gate.evaluate(ctx, { file = escapes .. "/self_kill.cu" }, w)
    expect(r.verdict):equals("worker_lost")
    expect(r.blame):equals("engine")
  end)
  ctx:close(); pool:close()
end)

describe("the sandboxed emu worker's load", function()
  it("refuses to compile: it is sent the library the engine built", function()
    local pool = assert(pool_mod.new { backend = "emu", timeout = 60 })
    local src = 'extern "C" __global__ void k(float *y) { y[0] = 1; }\n'
    local r, f = pool:request(1, { op = "load", module = "m", source = src, kernels = { "k" } })
    expect(r):is_nil()
    expect(f.verdict):equals("bad_request")
    expect(f.message):contains("cannot compile")
    local built = assert(require("klineage.emu").build(src, { name = "k.cu" }))
    local ok = assert(pool:request(1, { op = "load", module = "m", source = src, library = built.path, kernels = { "k" } }))
    expect(ok.functions.k.params):equals({ "ptr" })
    pool:close()
  end)
end)

os.execute("rm -rf '" .. marks .. "'")
