-- The Lua test runner used by `klineage test`. A spec file is a plain Lua
-- chunk that calls describe/it/expect, provided in its environment:
--
--   describe("kl.md", function()
--     it("drops raw HTML", function()
--       expect(md.html("<b>x</b>")):never_contains("<b>")
--     end)
--   end)
--
-- A failing expectation reports the spec's file:line, not the runner's.
local M = {}
local clock = require("kl.host").clock

local Failure = {}
Failure.__index = Failure
Failure.__tostring = function(f) return f.message end

-- Where in the spec file the failing expect was called: the first stack
-- level that is not this file.
local function spec_location()
  local here = debug.getinfo(1, "S").source
  for level = 3, 30 do
    local info = debug.getinfo(level, "Sl")
    if not info then break end
    if info.source ~= here and info.currentline > 0 and info.source:sub(1, 1) == "@" then
      return info.source:sub(2) .. ":" .. info.currentline
    end
  end
  return "?"
end

local function fail(fmt, ...)
  error(setmetatable({ message = spec_location() .. ": " .. string.format(fmt, ...) }, Failure), 0)
end

-- Raised by it.skip inside a running case: the case is skipped, not passed.
local Skip = {}
M.fail = fail

local function show(v)
  if type(v) == "string" then
    if #v > 200 then v = v:sub(1, 200) .. "..." end
    return string.format("%q", v)
  end
  return tostring(v)
end

local function deep_equal(a, b)
  if a == b then return true end
  if type(a) ~= "table" or type(b) ~= "table" then return false end
  for k, v in pairs(a) do
    if not deep_equal(v, b[k]) then return false end
  end
  for k in pairs(b) do
    if a[k] == nil then return false end
  end
  return true
end

local Expect = {}
Expect.__index = Expect

-- A failure (klineage.base.verdicts) is matched by its text, "verdict: message".
local function text_of(v)
  if type(v) == "table" and require("klineage.base.verdicts").is_failure(v) then return tostring(v) end
  return v
end

function Expect:equals(want)
  if not deep_equal(self.value, want) then fail("expected %s, got %s", show(want), show(self.value)) end
  return self
end
function Expect:is_true() if self.value ~= true then fail("expected true, got %s", show(self.value)) end return self end
function Expect:is_false() if self.value ~= false then fail("expected false, got %s", show(self.value)) end return self end
function Expect:is_nil() if self.value ~= nil then fail("expected nil, got %s", show(self.value)) end return self end
function Expect:exists() if self.value == nil then fail("expected a value, got nil") end return self end
function Expect:is_a(t)
  if type(self.value) ~= t then fail("expected a %s, got %s", t, type(self.value)) end
  return self
end
function Expect:contains(s)
  local v = text_of(self.value)
  if type(v) ~= "string" or not v:find(s, 1, true) then
    fail("expected %s to contain %s", show(self.value), show(s))
  end
  return self
end
function Expect:never_contains(s)
  local v = text_of(self.value)
  if type(v) == "string" and v:find(s, 1, true) then
    fail("expected %s not to contain %s", show(self.value), show(s))
  end
  return self
end
function Expect:matches(pattern)
  local v = text_of(self.value)
  if type(v) ~= "string" or not v:match(pattern) then
    fail("expected %s to match pattern %s", show(self.value), show(pattern))
  end
  return self
end
function Expect:at_least(n)
  if type(self.value) ~= "number" or self.value < n then fail("expected >= %s, got %s", show(n), show(self.value)) end
  return self
end
function Expect:at_most(n)
  if type(self.value) ~= "number" or self.value > n then fail("expected <= %s, got %s", show(n), show(self.value)) end
  return self
end
function Expect:near(want, tol)
  if type(self.value) ~= "number" or math.abs(self.value - want) > tol then
    fail("expected %s within %s of %s", show(self.value), show(tol), show(want))
  end
  return self
end
-- expect(fn):raises("substring") : fn must raise an error containing it.
function Expect:raises(substring)
  local ok, err = pcall(self.value)
  if ok then fail("expected an error, none was raised") end
  if substring and not tostring(err):find(substring, 1, true) then
    fail("expected an error containing %s, got %s", show(substring), show(tostring(err)))
  end
  return self
end

-- Each expect() counts: a case that checks nothing is a failure.
local expectations = 0
function M.expect(value)
  expectations = expectations + 1
  return setmetatable({ value = value }, Expect)
end

-- check(cond, fmt, ...): one expectation with a message of the case's own,
-- for checks whose failure needs more context than expect() gives.
function M.check(cond, fmt, ...)
  expectations = expectations + 1
  if not cond then fail(fmt, ...) end
  return cond
end

local function shell_quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end
M.shell_quote = shell_quote

-- klineage(arg1, arg2, ...) runs this very binary as a child process and
-- returns its combined output and exit code, for tests of the command line.
function M.klineage(...)
  local parts = { shell_quote(require("kl.host").executable()) }
  for _, a in ipairs({ ... }) do parts[#parts + 1] = shell_quote(a) end
  local h = io.popen(table.concat(parts, " ") .. " 2>&1", "r")
  local out = h:read("a")
  local _, _, code = h:close()
  return out, code
end

-- A scratch file with the given contents; returns its path.
function M.scratch_file(contents, suffix)
  local path = os.tmpname() .. (suffix or "")
  local h = assert(io.open(path, "wb"))
  h:write(contents)
  h:close()
  return path
end

-- A fresh scratch folder; returns its path.
function M.scratch_dir()
  local dir = os.tmpname() .. ".d"
  assert(os.execute("mkdir -p " .. shell_quote(dir)))
  return dir
end

-- Whole-file helpers for tests: a failure to open raises.
function M.write_file(path, text)
  local h = assert(io.open(path, "wb"))
  h:write(text)
  h:close()
  return path
end

function M.read_file(path)
  local h = assert(io.open(path, "rb"))
  local text = h:read("a")
  h:close()
  return text
end

-- Runs the spec files and prints one line per failure and a summary.
-- Returns passed, failed.
function M.run(files, opts)
  opts = opts or {}
  local out = opts.out or io.stdout
  local passed, failed, skipped = 0, 0, 0
  for _, file in ipairs(files) do
    local stack = {}
    local env = setmetatable({}, { __index = _G })
    env.expect = M.expect
    env.fail = fail
    env.check = M.check
    env.klineage = M.klineage
    env.scratch_file = M.scratch_file
    env.scratch_dir = M.scratch_dir
    env.write_file = M.write_file
    env.read_file = M.read_file
    env.describe = function(name, fn)
      stack[#stack + 1] = name
      fn()
      stack[#stack] = nil
    end
    -- it(name, fn) ; it.skip(name, reason) records a skipped case honestly.
    -- Inside a running case, it.skip ends that case as skipped.
    local current
    local cases_in_file = 0
    env.it = setmetatable({
      skip = function(name, reason)
        if current then error(setmetatable({ reason = reason }, Skip), 0) end
        cases_in_file = cases_in_file + 1
        skipped = skipped + 1
        out:write(string.format("SKIP %s > %s: %s\n", table.concat(stack, " > "), name, reason or ""))
      end,
    }, {
      __call = function(_, name, fn)
        local full = table.concat(stack, " > ") .. (#stack > 0 and " > " or "") .. name
        cases_in_file = cases_in_file + 1
        local t0 = clock()
        local before = expectations
        current = full
        local ok, err = xpcall(fn, function(e)
          if getmetatable(e) == Failure or getmetatable(e) == Skip then return e end
          return debug.traceback(tostring(e), 2)
        end)
        current = nil
        if ok and expectations == before then
          ok, err = false, full .. ": the case checked nothing (no expect or fail ran)"
        end
        if ok then
          passed = passed + 1
          -- with the time, flushed: a long GPU case shows where it is
          if opts.verbose then out:write(string.format("ok   %s (%.2f s)\n", full, clock() - t0)) out:flush() end
        elseif getmetatable(err) == Skip then
          skipped = skipped + 1
          out:write(string.format("SKIP %s: %s\n", full, tostring(err.reason or "")))
          out:flush()
        else
          failed = failed + 1
          out:write(string.format("FAIL %s (%.2f s)\n     %s\n", full, clock() - t0, tostring(err):gsub("\n", "\n     ")))
          out:flush()
        end
      end,
    })
    local chunk, err = loadfile(file, "t", env)
    if not chunk then
      failed = failed + 1
      out:write("FAIL " .. file .. "\n     " .. err .. "\n")
    else
      local ok, e = xpcall(chunk, debug.traceback)
      if not ok then
        failed = failed + 1
        out:write("FAIL " .. file .. " (outside any it)\n     " .. tostring(e):gsub("\n", "\n     ") .. "\n")
      elseif cases_in_file == 0 then
        failed = failed + 1
        out:write("FAIL " .. file .. ": the file has no cases (no it or it.skip ran)\n")
      end
    end
  end
  local summary = string.format("%d passed, %d failed", passed, failed)
  if skipped > 0 then summary = summary .. string.format(", %d skipped", skipped) end
  out:write(summary .. "\n")
  return passed, failed, skipped
end

return M
