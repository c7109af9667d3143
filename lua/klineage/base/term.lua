-- Text from outside the engine (kernels, skill records, LLM answers and
-- server errors, task, spec and file names, journal records) on its way
-- to a terminal. A terminal obeys the control characters in what it is
-- shown: an ESC sequence in a skill's intent could move the cursor, rewrite
-- earlier lines or retitle the window, and a newline in a message could
-- forge a line of our own. So every command that prints outside text
-- passes it through this one function first.
--
--   term.text(s [, lines]) -> s with every control character as a C escape
--       (\n \t \r \a \b \f \v, else \xHH: ESC is \x1b), the C1 controls
--       (U+0080..U+009F) and bytes that are not UTF-8 as \xHH too (an
--       8-bit terminal takes 0x9b as ESC [), and credentials redacted
--       (klineage.base.redact.text: the environment's keys, a URL's
--       user:password@, key/token query parameters). With lines, the
--       newlines stay, for a block of several lines (a record shown
--       whole); the rest is escaped alike. Not a string: tostring first.
--   term.invalid_bytes(s, replace) -> s with each byte that is not UTF-8
--       as replace(byte) gives it
local redact = require "klineage.base.redact"

local M = {}

local NAMED = { ["\n"] = "\\n", ["\t"] = "\\t", ["\r"] = "\\r", ["\a"] = "\\a", ["\b"] = "\\b", ["\f"] = "\\f",
                ["\v"] = "\\v" }

local function hex(c) return string.format("\\x%02x", c:byte()) end

local function control(c) return NAMED[c] or hex(c) end

-- Each byte of s that is not UTF-8 as replace(byte) gives it; the valid
-- runs unchanged (report/escape.lua uses it with U+FFFD).
function M.invalid_bytes(s, replace)
  if utf8.len(s) then return s end
  local out, i = {}, 1
  while i <= #s do
    local n, bad = utf8.len(s, i)
    if n then
      out[#out + 1] = s:sub(i)
      break
    end
    out[#out + 1] = s:sub(i, bad - 1)
    out[#out + 1] = replace(s:sub(bad, bad))
    i = bad + 1
  end
  return table.concat(out)
end

function M.text(s, lines)
  s = redact.text(tostring(s))
  s = M.invalid_bytes(s, hex)
  s = s:gsub("\194([\128-\159])", function(c) return "\\xc2" .. hex(c) end)
  if lines then
    s = s:gsub("[^%C\n]", control)
  else
    s = s:gsub("%c", control)
  end
  return s
end

return M
