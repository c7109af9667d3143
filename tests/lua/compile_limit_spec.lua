-- Every compile has a time limit (issue 35): NVRTC (in a child process,
-- cache.compile) and emu's host compiler (emu.build). Past it the compile
-- is stopped, processes and all, and the gate gives compile_timeout, blamed
-- on the candidate. The kernels of tests/adversarial/compile_time evaluate
-- constants for minutes; a limit of 2 s keeps this test short.
local cache = require "klineage.device.cache"
local emu = require "klineage.device.emu"
local gate = require "klineage.gate"
local verdicts = require "klineage.base.verdicts"
local workload = require "klineage.workload"
local files = require "klineage.base.files"
local proc = require "kl.proc"
local host = require "kl.host"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local fixtures = here .. "/../fixtures/workloads"
local slow = here .. "/../adversarial/compile_time"
local LIMIT = 2

local scratch = os.tmpname()
os.remove(scratch)
assert(os.execute("mkdir -m 0700 '" .. scratch .. "'"))

-- The processes whose command line mentions text (this user's, from /proc).
local function processes_with(text)
  local found = {}
  local ls = io.popen("ls /proc")
  for pid in ls:lines() do
    if pid:match("^%d+$") then
      local h = io.open("/proc/" .. pid .. "/cmdline", "rb")
      local cmd = h and h:read("a")
      if h then h:close() end
      if cmd and cmd:find(text, 1, true) then found[#found + 1] = pid end
    end
  end
  ls:close()
  return found
end

describe("the compile time limit", function()
  it("is registered: compile_timeout, stage compile, blamed on the candidate", function()
    local v = verdicts.get("compile_timeout")
    expect(v.stage):equals("compile")
    expect(v.blame):equals("candidate")
  end)

  it("stops NVRTC: its child is killed at the limit", function()
    local src = assert(files.read_text(slow .. "/constexpr_nvrtc.cu"))
    local t0 = host.clock()
    local job = cache.spawn_compile(src, { arch = "sm_90", name = "constexpr_nvrtc.cu", time_limit = LIMIT,
                                           cache_dir = scratch .. "/cubin" })
    local pid = job.proc.pid
    local r, f = cache.finish(job)
    local took = host.clock() - t0
    expect(r):is_nil()
    expect(f.verdict):equals("compile_timeout")
    expect(f.message):contains("constexpr_nvrtc.cu: NVRTC did not finish within the compile time limit of 2 s")
    expect(took):at_least(LIMIT)
    expect(took):at_most(LIMIT + 10)
    local gone = io.open("/proc/" .. pid .. "/stat", "r")
    if gone then gone:close() end
    expect(gone == nil):is_true()
  end)

  it("leaves a kernel that compiles in time alone, through the child", function()
    local src = assert(files.read_text(fixtures .. "/saxpy/v0.cu"))
    local r = assert(cache.compile(src, { arch = "sm_90", time_limit = 60, cache_dir = scratch .. "/cubin" }))
    expect(r.cached):is_false()
    expect(#r.cubin > 0):is_true()
    expect(r.functions.saxpy ~= nil):is_true()
    expect(assert(cache.compile(src, { arch = "sm_90", cache_dir = scratch .. "/cubin" })).cached):is_true()
  end)

  it("stops emu's host compiler, and every process it started", function()
    local src = assert(files.read_text(slow .. "/constexpr_host.cu"))
    local dir = scratch .. "/emu"
    local t0 = host.clock()
    local built, f = emu.build(src, { name = "constexpr_host.cu", cache_dir = dir, time_limit = LIMIT })
    local took = host.clock() - t0
    expect(built):is_nil()
    expect(f.verdict):equals("compile_timeout")
    expect(f.message):contains("constexpr_host.cu: the host compiler did not finish within the compile time limit of 2 s")
    expect(took):at_least(LIMIT)
    expect(took):at_most(LIMIT + 10)
    proc.sleep(0.2)
    expect(#processes_with(dir)):equals(0) -- no cc1plus left compiling the cache's .cpp
  end)

  it("gives compile_timeout through the gate, for NVRTC and for emu's host compile", function()
    local pool = assert(require("klineage.device.worker.pool").new { backend = "emu", timeout = 120 })
    local ctx = assert(require("klineage.device.context").new { journal = false, pool = pool, compile_limit = LIMIT })
    expect(ctx.compile_limit):equals(LIMIT)
    local w = assert(workload.load(fixtures .. "/saxpy"))
    local r = gate.evaluate(ctx, { file = slow .. "/constexpr_nvrtc.cu" }, w)
    expect(r.verdict):equals("compile_timeout")
    expect(r.blame):equals("candidate")
    expect(r.stages.compile.verdict):equals("compile_timeout")
    local h = gate.evaluate(ctx, { file = slow .. "/constexpr_host.cu" }, w)
    expect(h.verdict):equals("compile_timeout")
    expect(h.blame):equals("candidate")
    expect(h.stages.correct.message):contains("the host compiler did not finish")
    -- The same pool still judges a kernel afterwards; at the default limit,
    -- since a loaded machine can take more than LIMIT for saxpy itself.
    local after = assert(require("klineage.device.context").new { journal = false, pool = pool })
    expect(gate.evaluate(after, { file = fixtures .. "/saxpy/v0.cu" }, w).verdict):equals("ok")
    after:close(); ctx:close(); pool:close()
  end)

  it("defaults to a sane limit, and refuses a limit that is not one", function()
    expect(cache.TIME_LIMIT >= 60 and cache.TIME_LIMIT <= 300):is_true()
    local pool = assert(require("klineage.device.worker.pool").new { backend = "fake" })
    local ctx = assert(require("klineage.device.context").new { journal = false, pool = pool })
    expect(ctx.compile_limit):equals(cache.TIME_LIMIT)
    local none, f = require("klineage.device.context").new { journal = false, pool = pool, compile_limit = 0 }
    expect(none):is_nil()
    expect(f.verdict):equals("bad_input")
    ctx:close(); pool:close()
  end)
end)

os.execute("rm -rf '" .. scratch .. "'")
