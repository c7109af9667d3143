-- Text from outside the engine (kernel source, labels, messages, workload
-- descriptions, later LLM answers) made inert, for the two places it goes:
-- Markdown (which cmark then renders, safe by default) and the engine's own
-- HTML and SVG (diffs, charts), which go into the page raw.
--
--   escape.utf8(s) -> s with every byte that is not valid UTF-8 as U+FFFD
--   escape.html(s) -> text for HTML text and attribute values (& < > " ')
--   escape.md(s) -> inline Markdown that renders as exactly s: the
--       characters that mean something inline (\ ` * _ [ ] < > | ! & ~ #,
--       a table's | among them) backslash-escaped, and a start that could
--       open a block ("- ", "+ ", "1. ", "---", "==="); line breaks and
--       control characters as spaces
--   escape.code_block(text [, info]) -> a fenced code block holding text
--       verbatim: the fence is longer than any run of backticks in it
--   escape.code(s [, in_table]) -> an inline code span holding s; in a
--       table cell its | are escaped too (GitHub tables split cells at a
--       bare | even inside code, and unescape \| before the span is read)
local M = {}

local REPLACEMENT = "\u{FFFD}"

function M.utf8(s)
  return require("klineage.base.term").invalid_bytes(tostring(s), function() return REPLACEMENT end)
end

local HTML = { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&#39;" }

function M.html(s)
  return (M.utf8(s):gsub("[&<>\"']", HTML))
end

function M.md(s)
  s = M.utf8(s):gsub("[%c]", " ")
  s = s:gsub("[\\`*_%[%]<>|!&~#]", "\\%0")
  -- what opens a block at a line's start: a list item (- , + , 1. , 1) ),
  -- a rule or a heading's underline (---, ===)
  if s:match("^[-+] ") or s:match("^[-+]$") or s:match("^=+$") or s:match("^%-+$") then
    s = "\\" .. s
  else
    s = s:gsub("^(%d+)([.)] )", "%1\\%2"):gsub("^(%d+)([.)])$", "%1\\%2")
  end
  return s
end

local function longest_run(text, ch)
  local best = 0
  for run in text:gmatch(ch .. "+") do
    if #run > best then best = #run end
  end
  return best
end

function M.code_block(text, info)
  text = M.utf8(text)
  if info and not info:match("^[%w_+-]*$") then error("escape.code_block: the info string is the engine's: a plain word", 2) end
  local fence = string.rep("`", math.max(3, longest_run(text, "`") + 1))
  if text ~= "" and text:sub(-1) ~= "\n" then text = text .. "\n" end
  return fence .. (info or "") .. "\n" .. text .. fence .. "\n"
end

function M.code(s, in_table)
  s = M.utf8(s):gsub("[%c]", " ")
  local fence = string.rep("`", longest_run(s, "`") + 1)
  if in_table then s = s:gsub("|", "\\|") end
  -- a space each side keeps a backtick at an end from joining the fence
  local pad = (s:match("^`") or s:match("`$") or s:match("^ .* $")) and " " or ""
  return fence .. pad .. s .. pad .. fence
end

return M
