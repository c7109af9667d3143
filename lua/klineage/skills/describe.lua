-- Conditions in plain English. A precondition or a guard is data, a
-- triple over one fact (klineage/facts/vocabulary.lua):
--
--   { fact, op, value [, why = ..., support = ..., evidence = ...] }
--     op: "==", "~=", "<", "<=", ">", ">="
--     fact: a vocabulary name, or one with the suffix "_after": the same
--       fact of the kernel once the skill has been applied
--
--   describe.condition(c) -> "N % 4 == 0", "occupancy >= 25 %", ...
--   describe.negation(c) -> the condition that does not hold, in words
--   describe.value(fact, v) -> v in the fact's unit ("48 KiB", "25 %")
--   describe.holds(c, facts) -> true | false | nil (the fact is absent)
--
-- Reports, `klineage skills explain`, the learner's `why` and the
-- orchestrator's decisions all read conditions through this module, so
-- that one condition is said one way everywhere.
local facts = require "klineage.facts"

local M = {}

local OPS = { ["=="] = "==", ["~="] = "~=", ["<"] = "<", ["<="] = "<=", [">"] = ">", [">="] = ">=" }
local NEGATED = { ["=="] = "~=", ["~="] = "==", ["<"] = ">=", ["<="] = ">", [">"] = "<=", [">="] = "<" }
local SHOWN = { ["=="] = "=", ["~="] = "≠", ["<"] = "<", ["<="] = "≤", [">"] = ">", [">="] = "≥" }

M.OPS = OPS

local function check(c)
  if type(c) ~= "table" or type(c[1]) ~= "string" or not OPS[c[2]] or c[3] == nil then
    error("describe: a condition is { fact, op, value }, op one of == ~= < <= > >=", 3)
  end
end

-- The fact's name without "_after", and whether it had it.
local function base_of(fact)
  local base = fact:match("^(.*)_after$")
  return base or fact, base ~= nil
end

local function trim(x)
  local s = string.format("%.3f", x):gsub("0+$", ""):gsub("%.$", "")
  return s
end

function M.value(fact, v)
  if type(v) ~= "number" then return tostring(v) end
  local entry = facts.describe((base_of(fact))) or {}
  local unit = entry.unit
  if unit == "fraction" then return trim(v * 100) .. " %" end
  if unit == "bytes" then
    if v >= 1024 and v % 1024 == 0 then return string.format("%d KiB", v // 1024) end
    return string.format("%s B", trim(v))
  end
  if unit == "%" then return trim(v) .. " %" end
  if unit == "registers/thread" then return trim(v) .. " per thread" end
  if unit == "ms" then return trim(v) .. " ms" end
  return trim(v)
end

-- "size.N.div4" -> "N % 4", "size.K.div.BK" -> "K % BK"; nil for others.
local function divisibility(fact)
  local p, d = fact:match("^size%.([%w_]+)%.div(%d+)$")
  if p then return p .. " % " .. d end
  p, d = fact:match("^size%.([%w_]+)%.div%.([%w_]+)$")
  if p then return p .. " % " .. d end
end

-- The short name a reader knows: "N" for size.N, "BM" for define.BM.
local function short(fact)
  return fact:match("^size%.([%w_]+)$") or fact:match("^define%.([%w_]+)$") or fact
end

-- The role facts (klineage.facts.roles) in words: what the kernel does.
local ROLE_SUBJECT = {
  ["role.pattern"] = "the kernel's pattern",
  ["role.dominant.stride"] = "its heaviest global access",
  ["role.operands"] = "read-only operands",
  ["role.operands.reused"] = "operands read more than once an element",
  ["role.reduction.length"] = "elements reduced into one output",
  ["role.outputs_per_thread_slot"] = "outputs per thread the device holds",
  ["role.intensity"] = "arithmetic intensity (flops/byte)",
  ["role.bound"] = "its measured bound",
}
local PATTERN_WORDS = { row_reduce = "a reduction along rows", col_reduce = "a reduction down columns",
  contraction = "a contraction", elementwise = "elementwise", stencil = "a stencil", gather = "a gather",
  scatter = "a scatter", scan = "a scan", other = "none of the known patterns" }

local function role_said(base, op, v)
  if base == "role.pattern" and (op == "==" or op == "~=") and PATTERN_WORDS[v] then
    return "the kernel is " .. (op == "~=" and "not " or "") .. PATTERN_WORDS[v]
  end
  if base == "role.dominant.stride" and (op == "==" or op == "~=") then
    return "its heaviest global access is " .. (op == "~=" and "not " or "") .. tostring(v)
  end
  if base == "role.dominant.store" and type(v) == "boolean" then
    return "its heaviest global access is " .. (((op == "==") == v) and "a store" or "a load")
  end
  if base == "role.bound" and (op == "==" or op == "~=") then
    return "it was measured " .. (op == "~=" and "not " or "") .. (v == "memory" and "memory bound" or tostring(v) .. " bound")
  end
  local subject = ROLE_SUBJECT[base]
  if subject then return subject .. " " .. SHOWN[op] .. " " .. M.value(base, v) end
end

local function said(fact, op, v)
  local base, after = base_of(fact)
  local text
  local div = divisibility(base)
  local role = base:match("^role%.") and role_said(base, op, v)
  if role then
    text = role
  elseif div and type(v) == "boolean" then
    local holds = (op == "==") == v
    text = div .. (holds and " == 0" or " ≠ 0")
  elseif type(v) == "boolean" then
    local holds = (op == "==") == v
    text = base .. (holds and " holds" or " does not hold")
  else
    text = short(base) .. " " .. SHOWN[op] .. " " .. M.value(base, v)
  end
  return after and (text .. " after the change") or text
end

function M.condition(c)
  check(c)
  return said(c[1], c[2], c[3])
end

function M.negation(c)
  check(c)
  return said(c[1], NEGATED[c[2]], c[3])
end

local function compare(a, op, b)
  if op == "==" then return a == b end
  if op == "~=" then return a ~= b end
  if type(a) ~= "number" or type(b) ~= "number" then return nil end
  if op == "<" then return a < b end
  if op == "<=" then return a <= b end
  if op == ">" then return a > b end
  return a >= b
end

-- facts: a flat table of fact values (klineage.facts' f.values, or a
-- journal's facts_before); "_after" names are looked up as they are.
function M.holds(c, values)
  check(c)
  local v = values[c[1]]
  if v == nil then return nil end
  return compare(v, c[2], c[3])
end

return M
