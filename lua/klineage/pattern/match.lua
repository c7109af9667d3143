-- A friendly API over kl.match: patterns from text, matching with `where`
-- predicates, rewriting with templates, structural diff and
-- anti-unification.
--
--   local match = require "klineage.pattern.match"
--   local pat = assert(match.compile("for (int $i = 0; $i < $n; ++$i) $S"))
--   for _, m in ipairs(pat:find(unit_or_text, { where = function(b) return b.n.text == "N" end })) do
--     print(m.line, m.col, m.bindings.S.text)
--   end
--   local text, edits = pat:rewrite(unit, "#pragma unroll\nfor (int $i = 0; $i < $n; ++$i) $S")
--   local text, edits = match.splice(unit, { { node = n, text = "0" }, { after = m, text = " // x" } })
--   local ops = match.diff(old_text, new_text)
--   local g = match.generalize({ "a[i] = b[i] + 1;", "c[j] = b[j] + 2;" })  -- g.text, g.holes
--   local e = match.generalize_edits({ { before = "s += a[i] * b[i];", after = "s = fmaf(a[i], b[i], s);" },
--                                      { before = "t += x[k] * y[k];", after = "t = fmaf(x[k], y[k], t);" } })
--   e.pattern:rewrite(unit, e.after_text)                                    -- replays the edit
--
-- A unit is a kl.source unit or CUDA text. Every expected failure is nil,
-- failure (klineage.base.verdicts), verdict bad_input: for a bad pattern its
-- message has row:col, the line and a caret, and failure.error the parser's
-- error table; an overlap of edits or a template naming an unbound
-- metavariable says so in its message.
local pattern = require "klineage.pattern"
local kmatch = require "kl.match"
local source = require "kl.source"
local verdicts = require "klineage.base.verdicts"

local M = {}

local Pattern = {}
Pattern.__index = Pattern

local function as_unit(u, name)
  if type(u) == "string" then return (source.parse(u, name or "<input>")) end
  return u
end
M.as_unit = as_unit

-- Compiles pattern text. Returns the pattern, or nil, failure.
function M.compile(text)
  local tbl, f = pattern.parse(text)
  if not tbl then return nil, f end
  local self = setmetatable({ text = text, table = tbl, warnings = tbl.warnings }, Pattern)
  self.compiled = kmatch.pattern(tbl)
  self.compiled:compile()
  return self
end

-- Metavariable names of the pattern, in order of first use.
function Pattern:metavariables()
  local out = {}
  for i, m in ipairs(self.table.metas) do out[i] = m.name end
  return out
end

-- All matches in the unit. opts: where(bindings, match) -> boolean,
-- within = a kl.source node (only matches inside it), plus kl.match
-- options (prefilter, max_steps, max_matches).
function Pattern:find(unit, opts)
  opts = opts or {}
  unit = as_unit(unit)
  local matches, stats = self.compiled:find(unit, opts)
  local lo, hi
  if opts.within then
    local _, _, _, _, b, e = opts.within:range()
    lo, hi = b, e
  end
  if opts.where or lo then
    local kept = {}
    for _, m in ipairs(matches) do
      if (not lo or (m.begin >= lo and m["end"] <= hi)) and (not opts.where or opts.where(m.bindings, m)) then
        kept[#kept + 1] = m
      end
    end
    stats.filtered = #matches - #kept
    matches = kept
  end
  for _, m in ipairs(matches) do m.unit = unit end
  return matches, stats
end

-- Rewrites every match (that passes opts.where) with the template.
-- Returns the new text and the edit script, or nil, message.
local function rewrite(self, unit, template, opts)
  opts = opts or {}
  unit = as_unit(unit)
  local tpl, msg = pattern.template(template)
  if not tpl then return nil, msg end
  local copts = { prefilter = opts.prefilter, max_steps = opts.max_steps, max_matches = opts.max_matches,
    max_total_steps = opts.max_total_steps }
  if opts.where or opts.within then
    local sel = {}
    for _, m in ipairs(self:find(unit, opts)) do sel[#sel + 1] = m.index end
    copts.select = sel
  end
  return self.compiled:rewrite(unit, tpl, copts)
end

-- Rewrites with several rules at once: rules = { {pattern, template,
-- opts}, ... } (opts as for Pattern:rewrite). All edits are collected, then
-- applied bottom-up; two edits that overlap, from one rule or two, make
-- the result nil, message. Returns the new text and the edit script.
local function rewrite_all(unit, rules)
  unit = as_unit(unit)
  local crules = {}
  for i, rule in ipairs(rules) do
    local pat, text, opts = rule[1], rule[2], rule[3] or {}
    local tpl, msg = pattern.template(text)
    if not tpl then return nil, string.format("rule %d: %s", i, msg.message) end
    local copts = { prefilter = opts.prefilter, max_steps = opts.max_steps, max_matches = opts.max_matches,
    max_total_steps = opts.max_total_steps }
    if opts.where or opts.within then
      local sel = {}
      for _, m in ipairs(pat:find(unit, opts)) do sel[#sel + 1] = m.index end
      copts.select = sel
    end
    crules[i] = { pat.compiled, tpl, copts }
  end
  return kmatch.rewrite_all(unit, crules)
end

-- Matches a list of patterns over one unit in a single walk. Returns one
-- list of matches per pattern (counts with opts.count) and the stats.
function M.find_all(patterns, unit, opts)
  local compiled = {}
  for i, p in ipairs(patterns) do compiled[i] = p.compiled end
  return kmatch.find_all(compiled, as_unit(unit), opts)
end

-- A pattern set for many units: set:find_all(unit, opts) as above, with
-- the dispatch lists built once.
function M.set(patterns)
  local compiled = {}
  for i, p in ipairs(patterns) do compiled[i] = p.compiled end
  local set = kmatch.set(compiled)
  return {
    find_all = function(_, unit, opts) return set:find_all(as_unit(unit), opts) end,
    compiled = set,
  }
end

-- Edits by byte range, several at once: edits = { {begin = b, ["end"] = e,
-- text = t} (1-based inclusive bytes, as elements 5 and 6 of node:range();
-- e = b - 1 inserts before byte b, text "" deletes), {node = n [, text = t]}
-- (no text: delete n), {before = n, text = t}, {after = n, text = t} }.
-- Insertions at one point land in list order. Returns the new text and
-- the edit script in P:rewrite's shape, or nil, failure (bad_input) when
-- two edits overlap (its message names both). A malformed edit, a byte
-- outside the text or a node of another unit raises.
local function splice(unit, edits)
  return kmatch.splice(as_unit(unit), edits)
end

-- Structural diff, node by node (GumTree-like, engine/match/diff.c):
-- { {kind = "insert"|"delete"|"update"|"move", a, b, a_range, b_range,
-- a_at, b_at, node_kind}, ... }. a_at / b_at = { byte, line, col }: where
-- on the other side an inserted (a_at), deleted (b_at) or moved (both)
-- node goes or was (insert before that byte). Nodes pair only within
-- functions of the same name, and a moved subtree is one move. It says
-- what moved or was updated; to undo a lineage step, use klineage.pattern.stepdiff,
-- whose hunks revert (alone or together) to the old text.
function M.diff(a, b)
  return kmatch.diff(as_unit(a, "a"), as_unit(b, "b"))
end

-- A code snippet as kl.source nodes: an expression, one statement, or a
-- list of statements.
local function snippet(text)
  local body = text:match("^%s*(.-)%s*$")
  local is_stmt = body:match("[;}]$") ~= nil or body:match("^#") ~= nil
  local wrapped = "void __kl_snippet__() {\n" .. text .. (is_stmt and "" or ";") .. "\n}\n"
  local unit = source.parse(wrapped, "<snippet>")
  local fn = unit:functions()[1]
  local block = fn and fn:body()
  if not block then return nil, "cannot read the snippet as code: " .. text end
  local kids = block:children()
  if #kids == 0 then return nil, "empty snippet" end
  if not is_stmt then
    local value = #kids == 1 and kids[1].kind == "expr_stmt" and kids[1]:field("value")
    return value or kids[1]
  end
  if #kids == 1 then return kids[1] end
  return kids
end

local function as_instance(x)
  if type(x) == "string" then return snippet(x) end
  if type(x) == "table" and x.node then return x.node end
  if type(x) == "table" and x.nodes then return x.nodes end
  if type(x) == "table" and x.bindings then
    return nil, "this match is not made of whole nodes; give nodes or a list of statements"
  end
  return x
end

-- The most specific pattern covering all instances (strings, matches,
-- kl.source nodes, or lists of statement nodes). Returns { text, holes,
-- pattern } where pattern is the compiled result (nil if it does not
-- compile, with pattern_error saying why).
local function generalize(instances)
  local list, any_list = {}, false
  for i, x in ipairs(instances) do
    local inst, err = as_instance(x)
    if not inst then return nil, err end
    list[i] = inst
    if type(inst) == "table" then any_list = true end
  end
  if any_list then
    for i, inst in ipairs(list) do
      if type(inst) ~= "table" then list[i] = { inst } end
    end
  end
  local g = kmatch.generalize(list)
  local pat, msg = M.compile(g.text)
  g.pattern = pat
  g.pattern_error = msg
  return g
end

-- Generalizes edits (lineage steps): { {before = x, after = y}, ... } where
-- each side is what generalize takes. Returns { text = pattern text,
-- after_text = template text, holes, pattern } sharing metavariables, so
-- pattern:rewrite(unit, g.after_text) replays the edit on new code. Holes
-- only the after side has (after_only) are values the template cannot
-- take from a match; g.template_error says so when there are any.
local function generalize_edits(edits)
  local sides = { {}, {} }
  for i, e in ipairs(edits) do
    for s, key in ipairs({ "before", "after" }) do
      local inst, err = as_instance(e[key] or e[s])
      if not inst then return nil, err end
      sides[s][i] = inst
    end
  end
  for _, side in ipairs(sides) do
    local any_list = false
    for _, inst in ipairs(side) do
      if type(inst) == "table" then any_list = true end
    end
    if any_list then
      for i, inst in ipairs(side) do
        if type(inst) ~= "table" then side[i] = { inst } end
      end
    end
  end
  local g = kmatch.generalize_edits(sides[1], sides[2])
  local pat, msg = M.compile(g.text)
  g.pattern, g.pattern_error = pat, msg
  for _, h in ipairs(g.holes) do
    if h.after_only then
      g.template_error = "the after side differs where the before side does not: " .. h.name
    end
  end
  return g
end

M.parse_pattern = pattern.parse
M.template = pattern.template
-- The boundary: plain messages from above and from kl.match become
-- bad_input failures.
function Pattern:rewrite(...) return verdicts.lift("bad_input", rewrite(self, ...)) end
function M.rewrite_all(...) return verdicts.lift("bad_input", rewrite_all(...)) end
function M.splice(...) return verdicts.lift("bad_input", splice(...)) end
function M.generalize(...) return verdicts.lift("bad_input", generalize(...)) end
function M.generalize_edits(...) return verdicts.lift("bad_input", generalize_edits(...)) end

return M
