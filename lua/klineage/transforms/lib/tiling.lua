-- What the tiling transforms (coalesce, smem_tiling, register_blocking)
-- share: statements matched token by token against a pattern, the single
-- launch line read and rewritten, and fresh names.
--
--   tiling.tokens(node) -> { text... } the node's tokens (comments left out;
--       a directive's blanks written _: `#pragma_unroll`)
--   tiling.match(pattern, toks) -> captures | nil: pattern is tokens split
--       by blanks; `$X` matches one identifier (the same text again at
--       every later `$X`), `$#X` one integer literal or identifier,
--       `$*X` a run of one or more tokens (shortest first); anything else
--       matches itself
--   tiling.launch(unit) -> launch | nil, why: the unit's one `@kl launch`
--       line: { begin, end (the bytes of its clauses), grid = { text... },
--       block = { text... }, rest (smem(...) and the like, verbatim) }
--   tiling.launch_text(launch, grid, block) -> the new clause text
--   tiling.launch_edit(launch, grid, block) -> an edit for support.edit
--   tiling.fill(lines, c) -> the lines joined, each `$NAME` replaced by c.NAME
--   tiling.taken(unit, name) -> whether the unit's code, a #define's name
--       or a #define's value names it
--   tiling.float_pointer(fn, name) -> whether parameter `name` is a float *
--   tiling.kernel(unit) -> fn | nil: the unit's only __global__ function
local support = require "klineage.transforms.support"

local M = {}

function M.tokens(node)
  local a, b = node:token_range()
  local out = {}
  for _, t in ipairs(node.unit:tokens(a, b)) do
    -- a directive is one token: its blanks become _ (pattern word #pragma_unroll)
    if t.kind ~= "comment" then out[#out + 1] = t.text:sub(1, 1) == "#" and t.text:gsub("%s+", "_") or t.text end
  end
  return out
end

local function is_ident(s) return s:match("^[%a_][%w_]*$") ~= nil end

local function step(pat, pi, toks, ti, caps)
  if pi > #pat then return ti > #toks end
  local p = pat[pi]
  local star = p:match("^%$%*([%w_]+)$")
  if star then
    for last = ti, #toks do
      if step(pat, pi + 1, toks, last + 1, caps) then
        caps[star] = table.concat(toks, " ", ti, last)
        return true
      end
    end
    return false
  end
  local t = toks[ti]
  if not t then return false end
  local int, name = p:match("^%$(#?)([%w_]+)$")
  if name then
    if caps[name] then
      if caps[name] ~= t then return false end
      return step(pat, pi + 1, toks, ti + 1, caps)
    end
    if not (is_ident(t) or (int == "#" and t:match("^%d+$"))) then return false end
    caps[name] = t
    if step(pat, pi + 1, toks, ti + 1, caps) then return true end
    caps[name] = nil
    return false
  end
  return p == t and step(pat, pi + 1, toks, ti + 1, caps)
end

function M.match(pattern, toks)
  local pat = {}
  for w in pattern:gmatch("%S+") do pat[#pat + 1] = w end
  local caps = {}
  if step(pat, 1, toks, 1, caps) then return caps end
end

local function split_args(s)
  local parts, depth, start = {}, 0, 1
  for i = 1, #s do
    local ch = s:sub(i, i)
    if ch == "(" then depth = depth + 1 elseif ch == ")" then depth = depth - 1
    elseif ch == "," and depth == 0 then parts[#parts + 1] = s:sub(start, i - 1); start = i + 1 end
  end
  parts[#parts + 1] = s:sub(start)
  for k, p in ipairs(parts) do parts[k] = p:match("^%s*(.-)%s*$") end
  return parts
end

-- "name(...)" at position i of s: its inner text and the position after it.
local function clause(s, name)
  local b, e = s:find(name .. "%s*%(")
  if not b then return nil end
  local depth, j = 1, e + 1
  while j <= #s and depth > 0 do
    local ch = s:sub(j, j)
    if ch == "(" then depth = depth + 1 elseif ch == ")" then depth = depth - 1 end
    j = j + 1
  end
  if depth ~= 0 then return nil end
  return s:sub(e + 1, j - 2), b, j - 1
end

function M.launch(unit)
  local found
  for _, a in ipairs(unit:annotations()) do
    if a.text:match("^launch") then
      if found then return nil, "the file has more than one launch line" end
      found = a
    end
  end
  if not found then return nil, "the file has no @kl launch line" end
  local rest = found.text:match("^launch%s+(.*)$")
  if not rest then return nil, "the launch line names a kernel" end
  local text = tostring(unit)
  local line, at = 1, 1
  while line < found.line do
    at = text:find("\n", at, true)
    if not at then return nil, "the launch line is not in the text" end
    at, line = at + 1, line + 1
  end
  local eol = (text:find("\n", at, true) or #text + 1) - 1
  local b = text:find(rest, at, true)
  if not b or b + #rest - 1 > eol then return nil, "the launch line is not on one line" end
  local g, gb, ge = clause(rest, "grid")
  local k, kb, ke = clause(rest, "block")
  if not g or not k then return nil, "the launch line lacks grid(...) or block(...)" end
  local first, last = math.min(gb, kb), math.max(ge, ke)
  return { begin = b, ["end"] = b + #rest - 1, grid = split_args(g), block = split_args(k),
           head = rest:sub(1, first - 1), tail = rest:sub(last + 1),
           between = rest:sub(math.min(ge, ke) + 1, math.max(gb, kb) - 1), grid_first = gb < kb }
end

function M.launch_text(l, grid, block)
  local g = "grid(" .. table.concat(grid, ", ") .. ")"
  local k = "block(" .. table.concat(block, ", ") .. ")"
  if l.grid_first then return l.head .. g .. l.between .. k .. l.tail end
  return l.head .. k .. l.between .. g .. l.tail
end

function M.launch_edit(l, grid, block)
  return { begin = l.begin, ["end"] = l["end"], text = M.launch_text(l, grid, block) }
end

function M.fill(lines, c)
  return (table.concat(lines, "\n"):gsub("%$(%a%w*)", function(k) return assert(c[k], k) end))
end

-- has_word reads code, not preprocessor lines: #defines are read here.
function M.taken(unit, name)
  if unit:has_word(name) then return true end
  for _, d in ipairs(unit:defines()) do
    if d.name.text == name or (" " .. d.value.text .. " "):find("%f[%w_]" .. name .. "%f[^%w_]") then return true end
  end
  return false
end

function M.float_pointer(fn, name)
  for _, p in ipairs(fn:params()) do
    if p.name == name then return p.pointer_depth == 1 and p.base_span ~= nil and p.base_span.text == "float" end
  end
  return false
end

function M.kernel(unit)
  local fns = support.functions(unit, { global = true })
  if #fns == 1 then return fns[1] end
end

return M
