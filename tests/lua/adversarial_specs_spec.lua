-- The hostile workload specs of tests/adversarial/specs (its README says
-- what each does and must get): each is refused with bad_input and a
-- message that names the file, quickly, and nothing else happens.
local gate = require "klineage.gate"
local kernel = require "klineage.gate.kernel"
local session = require "klineage.gate.session"
local verdicts = require "klineage.base.verdicts"
local workload = require "klineage.workload"
local pool_mod = require "klineage.device.worker.pool"
local host = require "kl.host"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local specs = here .. "/../adversarial/specs"
local saxpy = here .. "/../fixtures/workloads/saxpy/v0.cu"

local MiB = 1 << 20
local TIMED = { index_chain = 1 }

local LIMITS = {
  -- seconds: generous, so that on a loaded machine the limit a spec is
  -- meant to meet still comes first; the specs meant to meet the time
  -- limit get TIMED's
  chunk = { instructions = 10000000, memory = 32 * MiB, seconds = 60 },
  init = { instructions = 1000000, memory = 32 * MiB, seconds = 60 },
  run = { instructions = 1000000, memory = 32 * MiB, seconds = 60 },
  buffer_bytes = 4096 * MiB,
}

-- Refused when the spec loads: a piece of the message.
local AT_LOAD = {
  os_execute = "attempt to index a nil value (global 'os')",
  io_open = "attempt to index a nil value (global 'io')",
  require_module = "attempt to call a nil value (global 'require')",
  load_chunk = "attempt to call a nil value (global 'load')",
  string_escape = "attempt to index a nil value",
  coroutine_escape = "attempt to index a nil value (global 'coroutine')",
  forever = "exceeded the instruction limit of 10000000 (workload.LIMITS.chunk.instructions)",
  forever_pcall = "exceeded the instruction limit of 10000000 (workload.LIMITS.chunk.instructions)",
  memory_bomb = "exceeded the memory limit of 32 MiB (workload.LIMITS.chunk.memory)",
  table_bomb = "exceeded the memory limit of 32 MiB (workload.LIMITS.chunk.memory)",
  pattern_bomb = "string.find: a pattern with 20 repetitions over 5000 characters",
  move_bomb = "table.move: 1 .. 9223372036854775807 is more than",
  len_remove = "exceeded the instruction limit of 10000000 (workload.LIMITS.chunk.instructions)",
  len_insert = "exceeded the instruction limit of 10000000 (workload.LIMITS.chunk.instructions)",
  -- the copy it sorts grows one element per few instructions: either limit
  len_sort = "(workload.LIMITS.chunk.",
  index_chain = "exceeded the time limit of 1 s (workload.LIMITS.chunk.seconds)",
  gc_finalizer = "a spec's metatable may not have __gc",
  metatable_return = "workload.lua: the value it returns: a table with a metatable",
  index_trick = "workload.lua: buffers: a table with a metatable",
  function_field = "workload.lua: rate.count: a function is not allowed here",
  loose_tolerance = "tolerance.atol: must be a number >= 0 and finite, got inf",
  nan_tolerance = "tolerance.rtol: must be a number >= 0 and finite",
  relative_everything = "tolerance.rtol: must be below 1",
}

-- Refused when judged: the message, and whether the failure comes from the
-- spec's run (Session:run), which the baseline's reference run reports.
local AT_GATE = {
  init_forever = { "buffers.x.init: exceeded the instruction limit of 1000000 (workload.LIMITS.init.instructions)" },
  init_raises = { "buffers.x.init: ", "no input today" },
  init_memory = { "buffers.x.init: exceeded the memory limit of 32 MiB (workload.LIMITS.init.memory)" },
  rep_empty = { "buffers.x.init returned 0 bytes, expected" },
  init_len_insert = { "buffers.x.init: exceeded the instruction limit of 1000000 (workload.LIMITS.init.instructions)" },
  huge_buffer = { "buffers: 16.0 GiB in all at a = 2.0, n = 2147483648", "over the limit of 4.0 GiB (workload.LIMITS.buffer_bytes)" },
  run_raises = { "workload.lua: run: ", "boom", run = true },
  run_forever = { "run: exceeded the instruction limit of 1000000 (workload.LIMITS.run.instructions)", run = true },
  run_engine_loop = { "run: exceeded the instruction limit of 1000000 (workload.LIMITS.run.instructions)", run = true },
  run_no_launch = { "run: made no launch of saxpy, the kernel under judgement", run = true },
  run_other_kernel = { "run: made no launch of saxpy, the kernel under judgement", run = true },
  run_bind_trick = { "run: ctx:launch's bind: a table with a metatable", run = true },
  run_bad_buffer = { "run: ctx:zero: z is not a buffer", run = true },
  too_many_args = { "args: 5 arguments, but saxpy in ", "takes 4 parameters", run = true },
  too_few_args = { "args: 3 arguments, but saxpy in ", "takes 4 parameters", run = true },
}

local function candidate_of(name)
  local own = specs .. "/" .. name .. "/kernel.cu"
  local h = io.open(own, "rb")
  if h then h:close() return own end
  return saxpy
end

describe("hostile specs: the README, the folders and this test agree", function()
  it("lists every folder once, with its expectation here", function()
    local listed = {}
    for name in assert(io.open(specs .. "/README.md")):read("a"):gmatch("\n| `([%w_]+)` |") do
      expect(listed[name]):is_nil()
      listed[name] = true
      expect(AT_LOAD[name] ~= nil or AT_GATE[name] ~= nil):is_true()
    end
    for name in pairs(AT_LOAD) do expect(listed[name]):is_true() end
    for name in pairs(AT_GATE) do expect(listed[name]):is_true() end
  end)
end)

describe("hostile specs: refused when they load", function()
  for name, want in pairs(AT_LOAD) do
    it(name, function()
      local t0 = host.clock()
      local limits = LIMITS
      if TIMED[name] then limits = { chunk = { instructions = 10000000, memory = 32 * MiB, seconds = TIMED[name] } } end
      local w, f = workload.load(specs .. "/" .. name, { limits = limits })
      expect(w):is_nil()
      expect(f.verdict):equals("bad_input")
      expect(f.message):contains(specs .. "/" .. name .. "/workload.lua")
      expect(f.message):contains(want)
      expect(f.message):never_contains("traceback")
      expect(host.clock() - t0):at_most(30)
    end)
  end
  it("os_execute made no file", function()
    expect(io.open("/tmp/klineage-spec-was-here", "rb")):is_nil()
  end)
end)

describe("hostile specs: refused when the gate judges a kernel", function()
  local pool = assert(pool_mod.new { backend = "fake", timeout = 30 })
  local ctx = assert(require("klineage.device.context").new { journal = false, pool = pool })
  for name, want in pairs(AT_GATE) do
    it(name, function()
      local t0 = host.clock()
      local w = assert(workload.load(specs .. "/" .. name, { limits = LIMITS }))
      local r = gate.evaluate(ctx, { file = candidate_of(name) }, w, { profile = false })
      local st = r.stages.correct or {}
      -- a spec's own failure is the input's, also where the baseline's run
      -- meets it first
      expect(r.verdict):equals("bad_input")
      if want.run then expect(st.message):contains(specs .. "/" .. name .. "/workload.lua: ") end
      for _, piece in ipairs(want) do expect(st.message):contains(piece) end
      expect(st.message):never_contains("traceback")
      expect(host.clock() - t0):at_most(30)
    end)
  end
  for name, want in pairs(AT_GATE) do
    if want.run then
      it(name .. ": Session:run raises bad_input", function()
        local w = assert(workload.load(specs .. "/" .. name, { limits = LIMITS }))
        local k = assert(kernel.prepare({ file = candidate_of(name) }, w, ctx.arch))
        local s = session.new { pool = pool }
        local p = workload.sizes(w)[1].params
        s:load(k)
        s:alloc(w, p)
        s:fill(w, p, 1)
        local ok, f = verdicts.catch(s.run, s, k, w, p)
        expect(ok):is_nil()
        expect(f.verdict):equals("bad_input")
        expect(f.message):contains(specs .. "/" .. name .. "/workload.lua: ")
        for _, piece in ipairs(want) do expect(f.message):contains(piece) end
      end)
    end
  end
  ctx:close(); pool:close()
end)
