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
local pool_mod = require "klineage.device.worker.pool"

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
local proc = require "kl.proc"

-- A process of this test's own for fcntl_signal.cu to aim at.
local function victim() return assert(proc.spawn { argv = { "sleep", "600" } }) end

-- Whether p is still running after a moment (a SIGIO is delivered when
-- the worker's pipe next becomes readable).
local function alive_after(p, seconds)
  local t = 0
  while t < seconds do
    if not p:running() then return false end
    proc.sleep(0.1)
    t = t + 0.1
  end
  return p:running()
end

local function context(env)
  env.KL_ESCAPE_MARK = mark
  local pool = assert(pool_mod.new { backend = "emu", timeout = 120, env = env })
  return assert(require("klineage.device.context").new { journal = false, pool = pool }), pool
end

describe("the emu sandbox, through the gate", function()
  local target = victim()
  local ctx, pool = context({ KL_ESCAPE_VICTIM = tostring(target.pid) })
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
  it("stops fcntl_signal.cu (F_SETOWN, F_SETSIG SIGKILL, O_ASYNC on its pipes): fault; its victim lives", function()
    local r = gate.evaluate(ctx, { file = escapes .. "/fcntl_signal.cu" }, w)
    expect(r.verdict):equals("fault")
    expect(r.stages.correct.message):contains("klineage sandbox: the kernel called fcntl")
    expect(r.stages.correct.message):contains("signal a process on its behalf")
    local again = gate.evaluate(ctx, { file = fixtures .. "/saxpy/v0.cu" }, w)
    expect(again.verdict):equals("ok")
    expect(alive_after(target, 1)):is_true()
  end)
  it("names the call and why in the line, when the kernel had not blocked SIGSYS", function()
    local r = gate.evaluate(ctx, { file = escapes .. "/socket.cu" }, w)
    expect(r.stages.correct.message):contains("klineage sandbox: the kernel called socket (syscall")
  end)
  ctx:close(); pool:close()
  target:close()
end)

describe("the emu escapes, with the sandbox off", function()
  local target = victim()
  local ctx, pool = context({ KLINEAGE_EMU_SANDBOX = "off", KL_ESCAPE_VICTIM = tostring(target.pid) })
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
  it("fcntl_signal.cu gets through: ok, and the next request kills its victim", function()
    local r = gate.evaluate(ctx, { file = escapes .. "/fcntl_signal.cu" }, w)
    expect(r.verdict):equals("ok")
    expect(gate.evaluate(ctx, { file = fixtures .. "/saxpy/v0.cu" }, w).verdict):equals("ok")
    expect(alive_after(target, 3)):is_false()
  end)
  ctx:close(); pool:close()
  target:close()
end)

-- The worker's environment: the kernel env_secrets.cu spoils its output
-- when it finds a credential there. The gate runs in a child whose own
-- environment holds the providers' keys, as a user's shell would.
describe("the emu worker's environment", function()
  local script = marks .. "/judge.lua"
  local h = assert(io.open(script, "w"))
  h:write(string.format([[
    local pool = assert(require("klineage.device.worker.pool").new { backend = "emu", timeout = 120,
      env = { KL_VISIBLE = os.getenv("KL_SHOW_CANARY") and "kl-secret-canary" or nil, GITHUB_TOKEN = "kl-secret-canary" } })
    local ctx = assert(require("klineage.device.context").new { journal = false, pool = pool })
    local w = assert(require("klineage.workload").load(%q))
    local r = require("klineage.gate").evaluate(ctx, { file = %q }, w)
    io.write(r.verdict, "\n")
    ctx:close(); pool:close()
  ]], fixtures .. "/saxpy", escapes .. "/env_secrets.cu"))
  h:close()
  local function judge(extra)
    local env = { OPENAI_API_KEY = "kl-secret-canary-1", ANTHROPIC_API_KEY = "kl-secret-canary-2",
                  KLINEAGE_LLM_API_KEY = "kl-secret-canary-3", KLINEAGE_LLM_COMMAND = "kl-secret-canary-4",
                  KLINEAGE_LLM_PROVIDER = "openai", AWS_SECRET_ACCESS_KEY = "kl-secret-canary-5" }
    for k, v in pairs(extra or {}) do env[k] = v end
    local p <close> = assert(proc.spawn { argv = { require("kl.host").executable(), "run", script }, env = env })
    local out, why = p:read_all(300)
    if not out or not out:match("^%a+") then print("judge: " .. tostring(out or why), p:stderr()) end
    return out and out:match("^(%a+)")
  end
  it("holds none of the engine's keys, nor a secret given in the pool's env", function()
    expect(judge()):equals("ok")
  end)
  it("would be seen by the kernel: a value it is let keep spoils the output", function()
    expect(judge({ KL_SHOW_CANARY = "1" })):equals("wrong")
  end)
end)

describe("the sandboxed emu worker's load", function()
  it("refuses to compile: it is sent the library the engine built", function()
    local pool = assert(pool_mod.new { backend = "emu", timeout = 60 })
    local src = 'extern "C" __global__ void k(float *y) { y[0] = 1; }\n'
    local r, f = pool:request(1, { op = "load", module = "m", source = src, kernels = { "k" } })
    expect(r):is_nil()
    expect(f.verdict):equals("bad_request")
    expect(f.message):contains("cannot compile")
    local built = assert(require("klineage.device.emu").build(src, { name = "k.cu" }))
    local ok = assert(pool:request(1, { op = "load", module = "m", source = src, library = built.path, kernels = { "k" } }))
    expect(ok.functions.k.params):equals({ "ptr" })
    pool:close()
  end)
end)

os.execute("rm -rf '" .. marks .. "'")
