-- An LLM's answer turned into a kernel: its code blocks, the one that
-- defines the entry function, and a check that the signature is kept.
--
--   answer.blocks(text) -> { { lang = "cuda", code = "..." }, ... }
--       fenced blocks (``` at a line's start, spaces before it allowed,
--       closed by a ``` line); lang is the info string's first word, lower
--       case ("" when none). An unclosed fence is not a block.
--   answer.extract(text, entry, kinds) -> code | nil, failure
--       kinds: the input's kernel.signature. Picks, among blocks of C-like
--       languages (none, cuda, cu, cpp, c++, c, cxx, cuh, h, hpp), the LAST
--       that defines entry (a model often quotes the input before its own
--       version); with no fences at all, the whole text when it defines
--       entry. Failures:
--         llm_no_code        no code block of a C-like language, and the
--                            text itself defines no entry
--         llm_bad_signature  code, but none defines entry, or its parameter
--                            kinds differ from kinds (failure.expected, .got)
local lpeg = require "lpeg"
local kernel = require "klineage.gate.kernel"
local verdicts = require "klineage.base.verdicts"

local M = {}

local P, S, C, Ct, Cg = lpeg.P, lpeg.S, lpeg.C, lpeg.Ct, lpeg.Cg
local nl = P "\n"
local ws = S " \t" ^ 0
local fence = P "```"
local rest_of_line = (1 - nl) ^ 0
local info = ws * Cg(C((1 - S " \t\r\n{`") ^ 0) / string.lower, "lang") * rest_of_line
local body_line = -(ws * fence) * rest_of_line * nl
local block = Ct(ws * fence * info * nl * Cg(C(body_line ^ 0), "code") * ws * fence * rest_of_line * (nl + -1))
local other_line = rest_of_line * nl + (1 - nl) ^ 1 * -1
local document = Ct((block + other_line) ^ 0)

M.CODE_LANGS = { [""] = true, cuda = true, cu = true, cpp = true, ["c++"] = true, c = true,
  cxx = true, cuh = true, h = true, hpp = true }

function M.blocks(text)
  if type(text) ~= "string" then error("answer.blocks: text must be a string", 2) end
  return document:match(text) or {}
end

local function same_kinds(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do
    if a[i] ~= b[i] then return false end
  end
  return true
end

local function show(kinds) return "(" .. table.concat(kinds, ", ") .. ")" end

-- code's signature of entry against kinds: code | nil, failure | false (no entry)
local function check(code, entry, kinds)
  local got, f = kernel.signature(code, entry)
  if not got then
    if f.message:find("^no function") then return false end
    return nil, verdicts.failure("llm_bad_signature", "the answer's " .. entry .. ": " .. f.message)
  end
  if not same_kinds(got, kinds) then
    return nil, verdicts.failure("llm_bad_signature", string.format(
      "the answer's %s takes %s, the input's takes %s", entry, show(got), show(kinds)),
      { expected = kinds, got = got })
  end
  return code
end

function M.extract(text, entry, kinds)
  if type(entry) ~= "string" or type(kinds) ~= "table" then error("answer.extract: entry and kinds are needed", 2) end
  local code_blocks = {}
  for _, b in ipairs(M.blocks(text)) do
    if M.CODE_LANGS[b.lang] then code_blocks[#code_blocks + 1] = b.code end
  end
  if #code_blocks == 0 then
    if #M.blocks(text) == 0 then
      local code, f = check(text, entry, kinds)
      if code then return code end
      if code == nil then return nil, f end
    end
    return nil, verdicts.failure("llm_no_code", "the answer has no C/C++/CUDA code block")
  end
  for i = #code_blocks, 1, -1 do
    local code, f = check(code_blocks[i], entry, kinds)
    if code then return code end
    if code == nil then return nil, f end
  end
  return nil, verdicts.failure("llm_bad_signature", string.format(
    "none of the answer's %d code blocks defines %s", #code_blocks, entry))
end

return M
