-- progress.lua: the one line long work shows on a terminal. Written to a
-- fake stream forced to tty mode (or not), with a fake clock: the fields
-- it holds, the cut to the width, the clearing, and silence off a
-- terminal. The environment's switch is checked in a child process.
local progress = require "klineage.cli.progress"
local testing = require "klineage.cli.testing"

local CLEAR = "\r\27[K"

local function fake_stream()
  local s = { chunks = {}, flushes = 0 }
  function s:write(...)
    for _, c in ipairs({ ... }) do self.chunks[#self.chunks + 1] = c end
    return self
  end
  function s:flush() self.flushes = self.flushes + 1 end
  function s:text() return table.concat(self.chunks) end
  return s
end

local function fake_clock(t)
  local c = { now = t }
  c.fn = function() return c.now end
  return c
end

-- The visible text of the last rewrite: what follows the last clear.
local function last_line(text)
  local rest = text
  while true do
    local i = rest:find(CLEAR, 1, true)
    if not i then return rest end
    rest = rest:sub(i + #CLEAR)
  end
end

-- A context as progress reads one: what it spent, and its limit.
local function spending(used, limit)
  return { used = used, limit = limit, spent = function(self) return self.used, self.limit end }
end

describe("progress.line on a terminal", function()
  it("shows what, the best so far, the cycles of the budget and the elapsed time", function()
    local s, clock = fake_stream(), fake_clock(100)
    local ctx = spending(12, 30)
    local line = progress.line(s, ctx, { tty = true, width = 100, clock = clock.fn })
    clock.now = 134
    line:show("bench saxpy: v2.cu (3/4) ...", "fastest v1.cu 0.4100 ms")
    expect(s:text()):equals(CLEAR .. "bench saxpy: v2.cu (3/4) ...  fastest v1.cu 0.4100 ms  cycles 12/30  34 s")
    expect(s.flushes):at_least(1)
  end)

  it("counts the cycles alone without a limit, reads the budget at each show, and gives minutes past 60 s", function()
    local s, clock = fake_stream(), fake_clock(0)
    local ctx = spending(3)
    local line = progress.line(s, ctx, { tty = true, width = 100, clock = clock.fn })
    ctx.used, clock.now = 12, 125
    line:show("walk step 2")
    expect(last_line(s:text())):equals("walk step 2  cycles 12  2m05s")
  end)

  it("cuts the line to one column less than the width, keeping the cycles and the time", function()
    local s, clock = fake_stream(), fake_clock(0)
    local line = progress.line(s, spending(7, 40), { tty = true, width = 40, clock = clock.fn })
    line:show(string.rep("x", 80), "fastest " .. string.rep("y", 30))
    local shown = last_line(s:text())
    expect(#shown):equals(39)
    expect(shown):matches("%.%.%.  cycles 7/40  0 s$")
    expect(shown):matches("^xxxx")
    -- a width too small for the tail still never wraps
    local tiny = fake_stream()
    progress.line(tiny, spending(7, 40), { tty = true, width = 10, clock = clock.fn }):show("judging")
    expect(#last_line(tiny:text())):at_most(9)
  end)

  it("counts characters, not bytes, and never cuts one in half", function()
    local s, clock = fake_stream(), fake_clock(0)
    local line = progress.line(s, spending(1), { tty = true, width = 30, clock = clock.fn })
    line:show(string.rep("é", 40))
    local shown = last_line(s:text())
    expect(utf8.len(shown)):equals(29)
    expect(shown):matches("%.%.%.  cycles 1  0 s$")
  end)

  it("clears itself: clear and done erase the line, and after done nothing more is written", function()
    local s = fake_stream()
    local line = progress.line(s, spending(0), { tty = true, width = 100, clock = function() return 0 end })
    line:clear() -- nothing shown yet: nothing to erase
    expect(s:text()):equals("")
    line:show("a")
    line:clear()
    expect(s:text():sub(-#CLEAR)):equals(CLEAR)
    line:show("b")
    line:done()
    local after_done = s:text()
    expect(after_done:sub(-#CLEAR)):equals(CLEAR)
    line:show("c")
    line:say("d")
    line:done()
    expect(s:text()):equals(after_done)
  end)

  it("says a line that stays: erased first, then the text and a newline, cut to the width", function()
    local s = fake_stream()
    local line = progress.line(s, spending(0), { tty = true, width = 20, clock = function() return 0 end })
    line:show("judging")
    line:say("step 1  took undo pragma_unroll transpose:for#1")
    local text = s:text()
    expect(text:sub(-(#CLEAR + 20))):equals(CLEAR .. "step 1  took und...\n")
  end)
end)

describe("progress.line off a terminal", function()
  it("writes nothing at all", function()
    local s = fake_stream()
    local line = progress.line(s, spending(5, 9), { tty = false, width = 100 })
    line:show("bench saxpy: v0.cu (1/2) ...", "fastest v0.cu 1.0000 ms")
    line:clear()
    line:say("step 1  took x")
    line:done()
    expect(#s.chunks):equals(0)
    expect(s.flushes):equals(0)
  end)

  it("refuses a context without a budget", function()
    expect(function() progress.line(fake_stream(), {}) end):raises("spent")
  end)
end)

describe("progress.wanted and progress.width, from the environment", function()
  -- A child process, so that the variables are its own; its stderr is a
  -- pipe, never a terminal.
  local script = scratch_file([[
local p = require "klineage.cli.progress"
io.write(tostring(p.wanted()), " ", tostring(p.width()), "\n")
]], ".lua")
  local function child(env)
    local cmd = "env " .. env .. " " .. testing.shell_quote(require("kl.host").executable()) .. " run "
      .. testing.shell_quote(script) .. " 2>/dev/null"
    local h = assert(io.popen(cmd, "r"))
    local out = h:read("a")
    h:close()
    return out
  end

  it("is off on a pipe, on with KLINEAGE_PROGRESS=1, off with KLINEAGE_PROGRESS=0", function()
    expect(child("-u KLINEAGE_PROGRESS -u COLUMNS")):equals("false 100\n")
    expect(child("-u COLUMNS KLINEAGE_PROGRESS=1")):equals("true 100\n")
    expect(child("-u COLUMNS KLINEAGE_PROGRESS=0")):equals("false 100\n")
  end)

  it("takes the width from $COLUMNS when it is a whole number", function()
    expect(child("-u KLINEAGE_PROGRESS COLUMNS=57")):equals("false 57\n")
    expect(child("-u KLINEAGE_PROGRESS COLUMNS=wide")):equals("false 100\n")
  end)
end)
