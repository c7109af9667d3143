-- kl.memcap: the allocator's cap on the engine's own Lua state.
local memcap = require "kl.memcap"

local MiB = 1 << 20

-- Runs fn with the cap set at what the state holds now plus `room`, and
-- lifts it whatever happens.
local function capped(room, fn)
  collectgarbage("collect")
  local prev = memcap.set(memcap.used() + room)
  local r = table.pack(pcall(fn))
  memcap.set(prev)
  return table.unpack(r, 1, r.n)
end

describe("kl.memcap", function()
  it("counts what the state holds, as the collector does", function()
    collectgarbage("collect")
    local before = memcap.used()
    local s = string.rep("x", 8 * MiB)
    expect(memcap.used() - before):at_least(8 * MiB - 4096) -- the string, less what the collector freed meanwhile
    -- within a few KiB of the collector's own count
    local gc = collectgarbage("count") * 1024
    expect(math.abs(memcap.used() - gc)):at_most(64 * 1024)
    s = nil
    collectgarbage("collect")
    expect(memcap.used() - before):at_most(MiB)
  end)

  it("refuses growth past the cap before it happens, and says so", function()
    local r0, raised0 = memcap.refusals()
    -- a lauxlib buffer asks the allocator once and raises
    local ok, err = capped(4 * MiB, function() return string.rep("x", 1 << 30) end)
    expect(ok):is_false()
    expect(err):contains("not enough memory")
    local r1, raised1 = memcap.refusals()
    expect(r1 - r0):equals(1)
    -- the core asks again after an emergency collection, then raises
    ok, err = capped(4 * MiB, function()
      local t = {}
      for i = 1, 1 << 24 do t[i] = i end
      return t
    end)
    expect(ok):is_false()
    expect(err):contains("not enough memory")
    local r2, raised2 = memcap.refusals()
    expect(r2 - r1):equals(2)
    expect(raised2 - raised1):equals(1)
    expect(raised1 - raised0):equals(0)
    -- lifted: the state works as before
    expect(#string.rep("x", 8 * MiB)):equals(8 * MiB)
  end)

  it("lets the emergency collection free garbage at the cap, with the collector stopped", function()
    local _, raised0 = memcap.refusals()
    local r0 = memcap.refusals()
    collectgarbage("stop")
    local ok, err = capped(16 * MiB, function()
      for i = 1, 64 do local _ = string.rep("y", MiB) .. i end -- 128 MiB of garbage in all
      return true
    end)
    collectgarbage("restart")
    expect(ok):is_true()
    expect(err):is_true()
    local r1, raised1 = memcap.refusals()
    expect(r1 - r0):at_least(1)  -- the cap was reached and the collector freed the garbage
    expect(raised1 - raised0):equals(0)
  end)

  it("returns the previous cap, and nil lifts it", function()
    local prev = memcap.set(123456789)
    expect(memcap.set(nil)):equals(123456789)
    expect(memcap.set(prev)):is_nil()
    expect(function() memcap.set(-1) end):raises("byte count")
  end)

  it("knows the host's physical memory", function()
    expect(memcap.physical()):at_least(64 * MiB)
  end)
end)
