-- One progress line for long work (bench, walk, and later optimize and
-- eval), rewritten in place on a terminal: what is being judged, the best
-- so far, the gate cycles used of the budget and the elapsed time.
--
--   progress.line(stream, ctx [, opts]) -> line
--     stream: has write (and flush); the commands give io.stderr
--     ctx: the run context; ctx:spent() (cycles, limit) is read at each show
--     opts = { tty = boolean (default progress.wanted()),
--              width = columns (default progress.width()),
--              clock = function -> seconds (default kl.host's clock) }
--   line:show(what [, best])  rewrites the line; best is the caller's words
--                             for the best so far ("fastest v3.cu 0.41 ms")
--   line:clear()              erases it, before other output to the terminal
--   line:say(text)            erases it and writes text as a line that stays
--   line:done()               erases it; later calls write nothing
--
-- Off a terminal every call writes nothing: the line is for a person
-- watching, and \r in a log or a pipe is noise.
local term = require "klineage.base.term"

local M = {}

M.ENV = "KLINEAGE_PROGRESS" -- "1" shows the line off a terminal too, "0" never
M.DEFAULT_WIDTH = 100

local CLEAR = "\r\27[K"

-- Whether to show the line on fd (default 2, stderr): the environment's
-- word first, then whether fd is a terminal.
function M.wanted(fd)
  local forced = os.getenv(M.ENV)
  if forced == "1" then return true end
  if forced == "0" then return false end
  return require("kl.host").isatty(fd or 2)
end

-- The terminal's width: $COLUMNS when it is a whole number, else 100 (a
-- terminal's real width needs an ioctl the host does not offer).
function M.width()
  local n = math.tointeger(tonumber(os.getenv("COLUMNS") or ""))
  if n and n > 0 then return n end
  return M.DEFAULT_WIDTH
end

-- The first n characters of s (UTF-8 aware; a byte that is not UTF-8
-- counts as one), with "..." in place of the cut when it is cut.
local function fit(s, n)
  local len = utf8.len(s)
  local function prefix(k)
    if not len then return s:sub(1, k) end
    local stop = utf8.offset(s, k + 1)
    return stop and s:sub(1, stop - 1) or s
  end
  if (len or #s) <= n then return s end
  if n <= 3 then return prefix(n) end
  return prefix(n - 3) .. "..."
end
M.fit = fit

local function elapsed(seconds)
  local s = math.floor(seconds + 0.5)
  if s < 60 then return string.format("%d s", s) end
  return string.format("%dm%02ds", s // 60, s % 60)
end

local Line = {}
Line.__index = Line

-- The text of one show: what and best first, cut to fit, so that the
-- cycles and the elapsed time at the end always show. One column is left
-- free: a line that fills the last column wraps on some terminals, and a
-- wrapped line breaks the \r rewrite.
function Line:text(what, best)
  local used, limit = self.ctx:spent()
  local cycles = limit and string.format("%d/%d", used, limit) or tostring(used)
  local tail = string.format("  cycles %s  %s", cycles, elapsed(self.clock() - self.t0))
  -- what and best carry outside text (task names, kernels, messages): a
  -- control character in them would break the \r rewrite, or worse
  local body = term.text(what) .. (best and best ~= "" and ("  " .. term.text(best)) or "")
  local room = self.width - 1
  if #tail >= room then return fit(body .. tail, room) end
  return fit(body, room - #tail) .. tail
end

function Line:show(what, best)
  if not self.on then return end
  self.stream:write(CLEAR, self:text(what, best))
  self.shown = true
  if self.stream.flush then self.stream:flush() end
end

function Line:clear()
  if not (self.on and self.shown) then return end
  self.stream:write(CLEAR)
  self.shown = false
  if self.stream.flush then self.stream:flush() end
end

function Line:say(text)
  if not self.on then return end
  self.stream:write(CLEAR, fit(term.text(text), self.width - 1), "\n")
  self.shown = false
  if self.stream.flush then self.stream:flush() end
end

function Line:done()
  self:clear()
  self.on = false
end

function M.line(stream, ctx, opts)
  assert(type(stream) == "table" or type(stream) == "userdata", "progress.line: stream must have write")
  assert(type(ctx) == "table" and type(ctx.spent) == "function", "progress.line: ctx must say what it spent (ctx:spent())")
  opts = opts or {}
  local on = opts.tty
  if on == nil then on = M.wanted() end
  local clock = opts.clock or require("kl.host").clock
  return setmetatable({ stream = stream, ctx = ctx, on = on, width = opts.width or M.width(), clock = clock,
                        t0 = clock(), shown = false }, Line)
end

return M
