-- klineage.workload.spec_sandbox: the environment and the limits of workload spec code.
local sandbox = require "klineage.workload.spec_sandbox"
local verdicts = require "klineage.base.verdicts"
local memcap = require "kl.memcap"

local MiB = 1 << 20
local LIMITS = { instructions = 2000000, memory = 16 * MiB }

-- Runs spec source text in a fresh sandbox; returns what sb:call returns.
local function run(text, limits, ...)
  local sb = sandbox.new()
  local ok, chunk, err = sb:call(limits or LIMITS, load, text, "=spec", "t", sb.env)
  assert(ok and chunk, err)
  return sb:call(limits or LIMITS, chunk, ...)
end

local function engine_state()
  local cap = memcap.set(nil)
  memcap.set(cap)
  return { hook = debug.gethook(), cap = cap, strings = getmetatable("").__index }
end

describe("spec_sandbox: the environment", function()
  it("has the whitelist and nothing that reaches the machine or the engine", function()
    local ok, names = run([[
      local present = {}
      for _, k in ipairs({ "os", "io", "require", "load", "loadfile", "dofile", "debug", "package",
                           "collectgarbage", "coroutine", "print", "warn" }) do
        if _G[k] ~= nil then present[#present + 1] = k end
      end
      if math.random or math.randomseed or string.dump then present[#present + 1] = "random/dump" end
      return table.concat(present, " "), type(pairs), type(string.format), type(randgen.rmat_csr)
    ]])
    expect(ok):is_true()
    expect(names):equals("")
    expect(select(3, run("return 1, type(pcall), type(utf8.char)"))):equals("function")
  end)

  it("refuses os.execute, as the old loader allowed", function()
    local marker = os.tmpname()
    os.remove(marker)
    local ok, msg, kind = run("os.execute('touch " .. marker .. "')")
    expect(ok):is_false()
    expect(kind):equals("error")
    expect(msg):contains("global 'os'")
    expect(io.open(marker, "rb")):is_nil()
  end)

  it("keeps the engine's metatables away: strings, failures, finalizers", function()
    local ok, msg = run("return getmetatable('').__index")
    expect(ok):is_false()
    expect(msg):contains("attempt to index a nil value")
    local f = verdicts.failure("fault", "a kernel's fault")
    ok, msg = run("local f = ... ; setmetatable(f, { __index = function() end })", nil, f)
    expect(ok):is_false()
    expect(msg):contains("a metatable the spec did not set")
    expect(verdicts.is_failure(f)):is_true()
    ok, msg = run("setmetatable({}, { __gc = function() while true do end end })")
    expect(ok):is_false()
    expect(msg):contains("__gc")
    -- its own metatables work as usual
    expect(select(2, run("local mt = { __index = function(_, k) return k .. '!' end } "
      .. "local t = setmetatable({}, mt) return t.x .. tostring(getmetatable(t) == mt)"))):equals("x!true")
  end)
end)

describe("spec_sandbox: the limits", function()
  it("ends an endless loop at the instruction limit", function()
    local ok, msg, kind = run("while true do end")
    expect(ok):is_false()
    expect(kind):equals("instructions")
    expect(msg):equals("exceeded the instruction limit of 2000000")
  end)

  it("is not fooled by a pcall around the loop", function()
    local _, _, kind = run("while true do pcall(function() while true do end end) end")
    expect(kind):equals("instructions")
    _, _, kind = run("while true do pcall(error) end")
    expect(kind):equals("instructions")
  end)

  it("refuses memory past the limit, a big string as a big table", function()
    local ok, msg, kind = run("return #string.rep('x', 1 << 30)")
    expect(ok):is_false()
    expect(kind):equals("memory")
    expect(msg):equals("exceeded the memory limit of 16 MiB")
    _, _, kind = run("local t = {} for i = 1, math.maxinteger do t[i] = i end", { instructions = 1 << 40, memory = 16 * MiB })
    expect(kind):equals("memory")
    -- caught in a pcall again and again: still stopped
    _, _, kind = run([[
      local keep = {}
      while true do pcall(function() keep[#keep + 1] = string.rep("x", 1 << 20) .. #keep end) end
    ]], { instructions = 1 << 40, memory = 16 * MiB })
    expect(kind):equals("memory")
  end)

  it("gives up a pattern that would backtrack for hours, method calls included", function()
    local _, msg, kind = run("return ('a'):rep(3000):find(('a*'):rep(12) .. 'b')")
    expect(kind):equals("error")
    expect(msg):contains("string.find: a pattern with 12 repetitions over 3000 characters")
    _, msg = run("return string.gsub(('a'):rep(3000), ('a-'):rep(8) .. 'b', '')")
    expect(msg):contains("string.gsub")
    -- ordinary patterns pass
    expect(select(2, run("return ('key=value'):match('^(%w+)=(%w+)$')"))):equals("key")
    expect(select(2, run("return ('a,b,c'):gsub(',', ';')"))):equals("a;b;c")
    expect(getmetatable("").__index == string):is_true()
  end)

  it("refuses a table.move over an endless range", function()
    local _, msg = run("table.move({}, 1, math.maxinteger, 2)")
    expect(msg):contains("table.move")
    expect(select(2, run("return #table.move({ 1, 2, 3 }, 1, 3, 2)"))):equals(4)
  end)

  it("returns string.rep of the empty string at once, however many times", function()
    expect(select(2, run("return #string.rep('', math.maxinteger) + #(''):rep(math.maxinteger, '')"))):equals(0)
    expect(select(2, run("return ('ab'):rep(3, ',')"))):equals("ab,ab,ab")
    local _, msg = run("return string.rep('', 1.5)")
    expect(msg):contains("number has no integer representation")
  end)

  it("walks what __len claims in Lua, where the limits hold: insert, remove, unpack, sort, move", function()
    local huge = "local t = setmetatable({}, { __len = function() return math.maxinteger - 1 end }) "
    for _, code in ipairs({ "table.insert(t, 1, 'x')", "table.remove(t, 1)", "table.move(t, 1, math.maxinteger - 1, 2)" }) do
      local ok, msg, kind = run(huge .. code)
      expect(ok):is_false()
      if kind ~= "instructions" then fail("%s: %s (%s)", code, msg, kind) end
    end
    -- a C function as __index: the sort's copy is made in Lua
    local _, _, kind = run("table.sort(setmetatable({}, { __len = function() return (1 << 31) - 2 end, __index = rawlen }))",
      { instructions = 2000000, memory = 1 << 30 })
    expect(kind):equals("instructions")
    local _, msg = run(huge .. "return table.unpack(t)")
    expect(msg):contains("too many results to unpack")
  end)

  it("gives tables with a metatable the C functions' results", function()
    local ok, a, b, c, d, e = run([[
      local log = {}
      local t = setmetatable({}, { __newindex = function(t, k, v) log[#log + 1] = k rawset(t, k, v) end })
      table.insert(t, "a") table.insert(t, "c") table.insert(t, 2, "b") table.insert(t, 1, "z")
      local removed = table.remove(t, 1) .. table.remove(t)
      table.sort(t, function(x, y) return x > y end)
      local moved = table.move(t, 1, 2, 2)
      return table.concat(t, ","), removed, table.concat({ table.unpack(t, 1, 3) }, "+"), moved == t, #log > 0
    ]])
    expect(ok):is_true()
    expect(a):equals("b,b,a")
    expect(b):equals("zc")
    expect(c):equals("b+b+a")
    expect(d):is_true()
    expect(e):is_true()
    local _, msg = run("table.insert(setmetatable({}, {}), 5, 1)")
    expect(msg):contains("bad argument #2 to 'insert' (position out of bounds)")
    _, msg = run("return table.concat(setmetatable({ 1, {} }, {}))")
    expect(msg):contains("invalid value (at index 2) in table for 'concat'")
  end)

  it("looks a gsub replacement table with a metatable up from Lua", function()
    expect(select(2, run("return (('a b'):gsub('%w', setmetatable({}, { __index = function(_, k) return k:upper() end })))")))
      :equals("A B")
    local _, _, kind = run([[
      local t = {}
      for _ = 1, 1990 do t = setmetatable({}, { __index = t }) end
      return (('x'):rep(1 << 22):gsub('.', t))
    ]], { instructions = 1 << 40, memory = 64 << 20, seconds = 1 })
    expect(kind):equals("seconds")
  end)

  it("ends code that is slow per instruction at the time limit", function()
    local t0 = require("kl.host").clock()
    local ok, msg, kind = run([[
      local t = {}
      for _ = 1, 1990 do t = setmetatable({}, { __index = t }) end
      local x
      while true do x = t.missing end
    ]], { instructions = 1 << 40, memory = 16 * MiB, seconds = 0.5 })
    expect(ok):is_false()
    expect(kind):equals("seconds")
    expect(msg):equals("exceeded the time limit of 0.5 s")
    expect(require("kl.host").clock() - t0):at_most(30)
    expect(require("kl.watchdog").left()):is_nil()
  end)

  it("does not count the engine's time, and watches the spec only while it runs", function()
    local seen
    local slow = sandbox.engine(function()
      seen = require("kl.watchdog").left()
      local t0 = require("kl.host").clock()
      while require("kl.host").clock() - t0 < 0.6 do end
    end)
    local ok = run("local f = ... ; f() ; f()", { instructions = 1 << 30, memory = 16 * MiB, seconds = 0.5 }, slow)
    expect(ok):is_true()
    expect(seen):is_nil()
  end)

  it("puts the engine's hook, cap and string table back, on success and on failure", function()
    local before = engine_state()
    run("return 1")
    expect(engine_state()):equals(before)
    run("while true do end")
    expect(engine_state()):equals(before)
    run("error('x')")
    expect(engine_state()):equals(before)
  end)
end)

describe("spec_sandbox: calls into the engine", function()
  it("runs engine code outside the limits, and passes its errors through unchanged", function()
    local big = sandbox.engine(function() return #string.rep("z", 64 * MiB) end)
    expect(select(2, run("return (...)()", nil, big))):equals(64 * MiB)
    local fault = verdicts.failure("fault", "the kernel crashed")
    local raising = sandbox.engine(function() error(fault, 0) end)
    local ok, e = pcall(run, "local f = ... ; f()", nil, raising)
    expect(ok):is_false()
    expect(rawequal(e, fault)):is_true()
    -- caught by the spec, it is the spec's to handle
    expect(select(2, run("local f = ... ; return (pcall(f))", nil, raising))):is_false()
  end)

  it("charges every engine call, so a loop of them ends", function()
    local calls = 0
    local noop = sandbox.engine(function() calls = calls + 1 end)
    local _, _, kind = run("local f = ... ; while true do f() end", nil, noop)
    expect(kind):equals("instructions")
    expect(calls):at_most(2000000 // sandbox.ENGINE_COST + 1)
  end)

  it("lets an engine call yield: the spec's limits stay on its own coroutine", function()
    local wait = sandbox.engine(function(x) return coroutine.yield(x) * 2 end)
    local co = coroutine.create(function()
      return run("local wait = ... ; local a = wait(1) ; local b = wait(2) ; return a + b", nil, wait)
    end)
    local before = engine_state()
    local ok, asked = coroutine.resume(co)
    expect(ok):is_true()
    expect(asked):equals(1)
    expect(engine_state()):equals(before) -- suspended: no hook, no cap, the engine's strings
    local _, asked2 = coroutine.resume(co, 10)
    expect(asked2):equals(2)
    local _, done, sum = coroutine.resume(co, 20)
    expect(done):is_true()
    expect(sum):equals(60)
    expect(engine_state()):equals(before)
  end)
end)

describe("spec_sandbox.plain", function()
  local function allow_init(path) return path:match("%.init$") ~= nil end
  it("copies plain data, sharing and cycles included", function()
    local shared = { 1, 2 }
    local t = { a = shared, b = shared, f = { init = print } }
    t.self = t
    local c = assert(sandbox.plain(t, "spec", allow_init))
    expect(c.a == c.b):is_true()
    expect(c.a == shared):is_false()
    expect(c.self == c):is_true()
    expect(c.f.init == print):is_true()
  end)
  it("refuses a metatable, a function where none belongs, a userdata, odd keys", function()
    expect(select(2, sandbox.plain({ buffers = setmetatable({}, {}) }, "spec"))):equals("buffers: a table with a metatable (a spec is plain data)")
    expect(select(2, sandbox.plain(setmetatable({}, {}), "the value it returns"))):contains("the value it returns: a table with a metatable")
    expect(select(2, sandbox.plain({ flops = print }, "spec", allow_init))):equals("flops: a function is not allowed here")
    expect(select(2, sandbox.plain({ x = io.stdout }, "spec"))):contains("x: a userdata")
    expect(select(2, sandbox.plain({ [{}] = 1 }, "spec"))):contains("a key of type table")
  end)
end)
