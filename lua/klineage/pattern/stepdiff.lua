-- A step diff that can be inverted: the hunks that turn one version of a
-- kernel (old) into the next (new), at the level of top-level items and
-- statements, each revertible alone.
--
--   local stepdiff = require "klineage.pattern.stepdiff"
--   local hunks = stepdiff.diff(old_unit_or_text, new_unit_or_text)
--   local text = stepdiff.revert(new_unit, hunks)          -- == old, byte for byte
--   local one = stepdiff.revert(new_unit, hunks, { 3 })    -- only hunk 3 undone
--
-- How old and new are paired, level by level:
--   * top-level items (and the items of an `extern "C" { }` block): first
--     the items equal by node:equals, in order (an LCS over node hashes);
--     between those, items with the same key: a function by its name, a
--     #define by the name it defines, a declaration by its declared names,
--     a struct by its name, anything else by its kind and first word;
--   * the statements of two paired functions: the same two passes, the
--     key being the kind plus, for a statement with a body (for, while, do,
--     if, switch, a block), the same header or the same bodies, for a
--     declaration the same declared names, for an assignment the same
--     left side, and for a #pragma its kind;
--   * two paired items or statements with bodies and the same shape (the
--     same number of bodies, the same brackets around them) are compared
--     inside: their headers token by token (a hunk of the differing tokens
--     only), their bodies as statement lists, recursively. Anything else
--     that differs is one hunk of whole statements.
-- Items are never paired across functions: a statement that moved into a
-- new helper is deleted from the kernel and inserted with the helper.
--
-- Hunks include the trivia: a statement's range starts at its leading
-- whitespace and comments, and the comments between items (the `@kl`
-- annotations among them) are hunks too, so reverting every hunk gives the
-- old text byte for byte. A hunk whose two sides differ only in trivia has
-- trivia = true.
--
-- A hunk:
--   { kind = "insert" | "delete" | "replace", level = "item" | "statement"
--     | "header", trivia = boolean,
--     old = { begin, ["end"], line, col, text }, new = { ... }
--         1-based inclusive bytes as node:range() gives; an empty side has
--         end = begin - 1 (the point where the other side's text goes)
--     old_nodes, new_nodes: the items or statements it covers (empty for a
--         header hunk)
--     anchors = { old = A, new = A }, A = { parent = P, prev = P?, next = P? }
--         parent: the node whose list (or header) holds the hunk; prev and
--         next: the neighbouring items or statements of that list, each
--         P = { node, begin, ["end"], unchanged = boolean }
--   }
-- in the order of the text (the old and the new order agree).
local match = require "klineage.pattern.match"
local source = require "kl.source"
local verdicts = require "klineage.base.verdicts"

local M = {}

-- Work bounds: a list pair beyond MAX_CELLS (old x new pieces) is one
-- hunk after its common ends are trimmed; nesting beyond MAX_DEPTH is one
-- hunk.
M.MAX_CELLS = 1000000
M.MAX_DEPTH = 200

-- ---- the text of a unit by token ----------------------------------------------

-- tb[i]: 0-based offset where token i's trivia starts; tb[n + 1] = #text.
local function side(unit)
  local toks = unit:tokens()
  local tb, off = {}, 0
  for i, t in ipairs(toks) do
    tb[i] = off
    off = off + #t.trivia + #t.text
  end
  tb[#toks + 1] = off
  local text = tostring(unit)
  assert(off == #text, "stepdiff: the tokens do not tile the text")
  local lines, k = { 0 }, 1 -- 0-based offsets where lines start
  for at in text:gmatch("\n()") do
    k = k + 1
    lines[k] = at - 1
  end
  return { unit = unit, text = text, toks = toks, tb = tb, n = #toks, lines = lines }
end

-- Bytes of token range [a, b) (1-based, b exclusive), trivia included.
local function bytes(s, a, b) return s.text:sub(s.tb[a] + 1, s.tb[b]) end

local function same_bytes(so, a0, a1, sn, b0, b1)
  return so.tb[a1] - so.tb[a0] == sn.tb[b1] - sn.tb[b0] and bytes(so, a0, a1) == bytes(sn, b0, b1)
end

local function same_token(so, i, sn, j)
  local x, y = so.toks[i], sn.toks[j]
  return x.text == y.text and x.trivia == y.trivia
end

local function piece_of(node)
  local a, b = node:token_range()
  return { node = node, a = a, b = b + 1 } -- tokens [a, b)
end

-- ---- bodies, headers and keys -----------------------------------------------------

local BODIED = { ["for"] = true, ["while"] = true, ["do"] = true, ["if"] = true, switch = true,
  range_for = true, compound = true, ["function"] = true, linkage = true, unit = true }

-- A region: a list of pieces that tiles tokens [a, b).
local function compound_region(node)
  local a, b = node:token_range()
  local kids = node:children()
  local r = { a = a + 1, b = b, pieces = {} } -- between the braces
  for i, k in ipairs(kids) do r.pieces[i] = piece_of(k) end
  return r
end

local function tiles(r)
  local at = r.a
  for _, p in ipairs(r.pieces) do
    if p.a ~= at then return false end
    at = p.b
  end
  return at == r.b
end

local function body_region(node)
  if node.kind == "compound" then return compound_region(node) end
  local p = piece_of(node)
  return { a = p.a, b = p.b, pieces = { p } }
end

-- The statement lists of a node with bodies, in text order, or nil.
local function find_regions(s, node)
  local kind = node.kind
  if not BODIED[kind] then return nil end
  local rs = {}
  if kind == "unit" then
    local r = { a = 1, b = s.n, pieces = {} } -- the EOF token's trivia is the tail
    for i, k in ipairs((node:children())) do r.pieces[i] = piece_of(k) end
    rs[1] = r
  elseif kind == "compound" then
    rs[1] = compound_region(node)
  else
    local kids, fields = node:children()
    for i, k in ipairs(kids) do
      local f = fields[i]
      if f == "body" or f == "then" or f == "else" then rs[#rs + 1] = body_region(k) end
    end
    if kind == "function" or kind == "linkage" then
      if #rs ~= 1 or kids[#kids].kind ~= "compound" then return nil end
    end
  end
  if #rs == 0 then return nil end
  for _, r in ipairs(rs) do
    if not tiles(r) then return nil end
  end
  return rs
end

-- Regions of a piece, computed once.
local function regions_of(s, p)
  if p.rs == nil then p.rs = find_regions(s, p.node) or false end
  return p.rs or nil
end

-- The token ranges of a node outside its regions: [a, b) pairs.
local function glue(p, rs)
  local out, at = {}, p.a
  for _, r in ipairs(rs) do
    out[#out + 1] = { at, r.a }
    at = r.b
  end
  out[#out + 1] = { at, p.b }
  return out
end

local BRACKETS = { ["("] = true, [")"] = true, ["["] = true, ["]"] = true, ["{"] = true, ["}"] = true }

-- Texts of the tokens of range [a, b): all of them, and the brackets.
local function words(s, a, b)
  local all, br = {}, {}
  for i = a, b - 1 do
    local t = s.toks[i].text
    all[#all + 1] = t
    if BRACKETS[t] then br[#br + 1] = t end
  end
  return table.concat(all, " "), table.concat(br)
end

local function header_key(s, p, rs)
  if p.hk then return p.hk end
  local parts = {}
  for _, g in ipairs(glue(p, rs)) do parts[#parts + 1] = (words(s, g[1], g[2])) end
  p.hk = table.concat(parts, " | ")
  return p.hk
end

-- The node hashes of each body, joined: the same bodies (up to a hash
-- collision, which only pairs two statements that then differ inside).
local function bodies_key(p, rs)
  if p.bk then return p.bk end
  local parts = {}
  for k, r in ipairs(rs) do
    local hs = {}
    for q, piece in ipairs(r.pieces) do hs[q] = string.format("%x", piece.node:hash()) end
    parts[k] = table.concat(hs, ",")
  end
  p.bk = table.concat(parts, " | ")
  return p.bk
end

local function declared_names(node)
  local names = {}
  local decl = node.kind == "decl_stmt" and (node:children())[1] or node
  if not decl or decl.kind ~= "decl" then return nil end
  for _, k in ipairs((decl:children())) do
    if k.kind == "declarator" then
      local nm = k:field("name")
      if nm then names[#names + 1] = nm:text() end
    end
  end
  return #names > 0 and table.concat(names, ",") or nil
end

local function first_word(s, p) return s.toks[p.a].text end

-- The key of a top-level item.
local function item_key(s, p)
  local n = p.node
  local kind = n.kind
  if kind == "function" then return "function " .. (n:name() or "?") end
  if kind == "preproc" then
    local name = s.toks[p.a].text:match("^#%s*define%s+([%a_][%w_]*)")
    if name then return "define " .. name end
    return "pp " .. s.toks[p.a].text:gsub("%s+", " ")
  end
  if kind == "decl" or kind == "decl_stmt" then
    local names = declared_names(n)
    if names then return "decl " .. names end
  end
  if kind == "struct" then
    local nm = n:field("name")
    if nm then return "struct " .. nm:text() end
  end
  if kind == "linkage" then
    local rs = regions_of(s, p)
    if rs then return "linkage " .. header_key(s, p, rs) end
  end
  return kind .. " " .. first_word(s, p)
end

-- The key of a statement, or nil when it pairs only with an equal one.
local function stmt_key(s, p)
  local n = p.node
  local kind = n.kind
  if kind == "pragma" then return "pragma" end
  if kind == "decl_stmt" then
    local names = declared_names(n)
    return names and "decl " .. names
  end
  if kind == "expr_stmt" then
    local v = (n:children())[1]
    if v and v.kind == "assign" then
      local lhs = v:field("lhs")
      if lhs then
        local a, b = lhs:token_range()
        return "assign " .. (words(s, a, b + 1))
      end
    end
  end
  return nil
end

-- ---- LCS --------------------------------------------------------------------------

-- Pairs (i, j) of an LCS of O[lo1..hi1] and N[lo2..hi2] under same(i, j),
-- in order; nil when the table would pass MAX_CELLS.
local function lcs(lo1, hi1, lo2, hi2, same)
  local pairs_ = {}
  local pre = {}
  while lo1 <= hi1 and lo2 <= hi2 and same(lo1, lo2) do
    pre[#pre + 1] = { lo1, lo2 }
    lo1, lo2 = lo1 + 1, lo2 + 1
  end
  local post = {}
  while lo1 <= hi1 and lo2 <= hi2 and same(hi1, hi2) do
    post[#post + 1] = { hi1, hi2 }
    hi1, hi2 = hi1 - 1, hi2 - 1
  end
  local m, n = hi1 - lo1 + 1, hi2 - lo2 + 1
  for _, q in ipairs(pre) do pairs_[#pairs_ + 1] = q end
  if m > 0 and n > 0 then
    if m * n > M.MAX_CELLS then return nil end
    -- L[i][j]: LCS length of O[i..] and N[j..] (row i, column j).
    local L = {}
    for i = m + 1, 1, -1 do L[i] = {} end
    for j = 1, n + 1 do L[m + 1][j] = 0 end
    for i = m, 1, -1 do
      local row, below = L[i], L[i + 1]
      row[n + 1] = 0
      for j = n, 1, -1 do
        if same(lo1 + i - 1, lo2 + j - 1) then row[j] = below[j + 1] + 1
        else
          local a, b = below[j], row[j + 1]
          row[j] = a > b and a or b
        end
      end
    end
    local i, j = 1, 1
    while i <= m and j <= n do
      if same(lo1 + i - 1, lo2 + j - 1) and L[i][j] == L[i + 1][j + 1] + 1 then
        pairs_[#pairs_ + 1] = { lo1 + i - 1, lo2 + j - 1 }
        i, j = i + 1, j + 1
      elseif L[i + 1][j] >= L[i][j + 1] then
        i = i + 1
      else
        j = j + 1
      end
    end
  end
  for k = #post, 1, -1 do pairs_[#pairs_ + 1] = post[k] end
  return pairs_
end

-- ---- hunks ------------------------------------------------------------------------

local function range_of(s, a, b)
  local off = s.tb[a]
  local lines, lo, hi = s.lines, 1, #s.lines + 1 -- the last line start <= off
  while hi - lo > 1 do
    local mid = (lo + hi) // 2
    if lines[mid] <= off then lo = mid else hi = mid end
  end
  local line, col = lo, off - lines[lo] + 1
  return { begin = off + 1, ["end"] = s.tb[b], line = line, col = col, text = bytes(s, a, b),
    first_kind = a < b and s.toks[a].kind or nil, last_kind = a < b and s.toks[b - 1].kind or nil }
end

local function anchor(s, p, unchanged)
  if not p then return nil end
  return { node = p.node, begin = s.tb[p.a] + 1, ["end"] = s.tb[p.b], unchanged = unchanged or false }
end

local function parent_anchor(s, node)
  local a, b = node:token_range()
  if node.kind == "unit" then b = s.n end
  return { node = node, begin = s.tb[a] + 1, ["end"] = s.tb[b + 1] }
end

-- The trivia flag: the two sides have the same tokens.
local function only_trivia(so, a0, a1, sn, b0, b1)
  if a1 - a0 ~= b1 - b0 then return false end
  for k = 0, a1 - a0 - 1 do
    if so.toks[a0 + k].text ~= sn.toks[b0 + k].text then return false end
  end
  return true
end

local function add_hunk(st, level, a0, a1, b0, b1, onodes, nnodes, anchors)
  local so, sn = st.old, st.new
  local kind = a0 == a1 and "insert" or b0 == b1 and "delete" or "replace"
  st.hunks[#st.hunks + 1] = {
    kind = kind, level = level, trivia = only_trivia(so, a0, a1, sn, b0, b1),
    old = range_of(so, a0, a1), new = range_of(sn, b0, b1),
    old_nodes = onodes, new_nodes = nnodes, anchors = anchors,
    _ao = so.tb[a0], _an = sn.tb[b0],
  }
end

local diff_list

-- Two paired pieces: compared inside when they have the same shape, else
-- one hunk. ctx: { po, pn (parents), level, prev/next anchors }.
local function diff_pair(st, x, y, depth, ctx)
  local so, sn = st.old, st.new
  if same_bytes(so, x.a, x.b, sn, y.a, y.b) then return end
  local ro, rn = regions_of(so, x), regions_of(sn, y)
  local inside = ro and rn and #ro == #rn and depth < M.MAX_DEPTH and x.node.kind == y.node.kind
  local go, gn
  if inside then
    go, gn = glue(x, ro), glue(y, rn)
    for k = 1, #go do
      local _, bo = words(so, go[k][1], go[k][2])
      local _, bn = words(sn, gn[k][1], gn[k][2])
      if bo ~= bn then inside = false break end
    end
  end
  if not inside then
    add_hunk(st, ctx.level, x.a, x.b, y.a, y.b, { x.node }, { y.node }, {
      old = { parent = ctx.po, prev = ctx.oprev, next = ctx.onext },
      new = { parent = ctx.pn, prev = ctx.nprev, next = ctx.nnext } })
    return
  end
  -- The header: the differing tokens of each glue range.
  for k = 1, #go do
    local a0, a1, b0, b1 = go[k][1], go[k][2], gn[k][1], gn[k][2]
    while a0 < a1 and b0 < b1 and same_token(so, a0, sn, b0) do a0, b0 = a0 + 1, b0 + 1 end
    while a0 < a1 and b0 < b1 and same_token(so, a1 - 1, sn, b1 - 1) do a1, b1 = a1 - 1, b1 - 1 end
    if a0 < a1 or b0 < b1 then
      add_hunk(st, "header", a0, a1, b0, b1, {}, {}, {
        old = { parent = parent_anchor(so, x.node) }, new = { parent = parent_anchor(sn, y.node) } })
    end
  end
  local level = (x.node.kind == "unit" or x.node.kind == "linkage") and "item" or "statement"
  for k = 1, #ro do diff_list(st, x.node, ro[k], y.node, rn[k], depth + 1, level) end
end

-- The hunks of one unpaired stretch O[i0..i1], N[j0..j1] of a list.
local function stretch(st, ro, i0, i1, rn, j0, j1, ctx)
  if i0 > i1 and j0 > j1 then return end
  local so, sn = st.old, st.new
  local O, N = ro.pieces, rn.pieces
  local a = i0 <= i1 and O[i0].a or (i0 > 1 and O[i0 - 1].b or ro.a)
  local b = j0 <= j1 and N[j0].a or (j0 > 1 and N[j0 - 1].b or rn.a)
  local function nodes(L, p, q)
    local t = {}
    for k = p, q do t[#t + 1] = L[k].node end
    return t
  end
  local oprev, onext = anchor(so, O[i0 - 1], ctx.unchanged_o[i0 - 1]), anchor(so, O[i1 + 1], ctx.unchanged_o[i1 + 1])
  local nprev, nnext = anchor(sn, N[j0 - 1], ctx.unchanged_n[j0 - 1]), anchor(sn, N[j1 + 1], ctx.unchanged_n[j1 + 1])
  if i0 > i1 or j0 > j1 then
    -- One side only: a hunk per item or statement.
    for k = i0, i1 do
      add_hunk(st, ctx.level, O[k].a, O[k].b, b, b, { O[k].node }, {}, {
        old = { parent = ctx.po, prev = anchor(so, O[k - 1], ctx.unchanged_o[k - 1]), next = anchor(so, O[k + 1], ctx.unchanged_o[k + 1]) },
        new = { parent = ctx.pn, prev = nprev, next = nnext } })
    end
    for k = j0, j1 do
      add_hunk(st, ctx.level, a, a, N[k].a, N[k].b, {}, { N[k].node }, {
        old = { parent = ctx.po, prev = oprev, next = onext },
        new = { parent = ctx.pn, prev = anchor(sn, N[k - 1], ctx.unchanged_n[k - 1]), next = anchor(sn, N[k + 1], ctx.unchanged_n[k + 1]) } })
    end
    return
  end
  add_hunk(st, ctx.level, O[i0].a, O[i1].b, N[j0].a, N[j1].b, nodes(O, i0, i1), nodes(N, j0, j1), {
    old = { parent = ctx.po, prev = oprev, next = onext }, new = { parent = ctx.pn, prev = nprev, next = nnext } })
end

-- The hunks between two lists of pieces (region ro of old node po, rn of
-- new node pn).
function diff_list(st, po, ro, pn, rn, depth, level)
  local so, sn = st.old, st.new
  local O, N = ro.pieces, rn.pieces
  local ho, hn = {}, {}
  for i, p in ipairs(O) do ho[i] = p.node:hash() end
  for j, p in ipairs(N) do hn[j] = p.node:hash() end
  local function equal(i, j)
    return ho[i] == hn[j] and O[i].node.kind == N[j].node.kind and O[i].node:equals(N[j].node)
  end
  local ctx = { po = parent_anchor(so, po), pn = parent_anchor(sn, pn), level = level,
    unchanged_o = {}, unchanged_n = {} }
  local anchors = lcs(1, #O, 1, #N, equal)
  if not anchors then
    stretch(st, ro, 1, #O, rn, 1, #N, ctx)
    return
  end
  for _, q in ipairs(anchors) do ctx.unchanged_o[q[1]], ctx.unchanged_n[q[2]] = true, true end
  -- Keys for the second pass.
  local ko, kn = {}, {}
  local key = level == "item" and item_key or stmt_key
  for i, p in ipairs(O) do ko[i] = key(so, p) end
  for j, p in ipairs(N) do kn[j] = key(sn, p) end
  local function pairable(i, j)
    local x, y = O[i], N[j]
    if x.node.kind ~= y.node.kind then return false end
    if ko[i] and ko[i] == kn[j] then return true end
    if level ~= "item" and BODIED[x.node.kind] then
      local rx, ry = regions_of(so, x), regions_of(sn, y)
      if not rx or not ry or #rx ~= #ry then return false end
      -- the same header, or the same bodies under another header
      return header_key(so, x, rx) == header_key(sn, y, ry) or bodies_key(x, rx) == bodies_key(y, ry)
    end
    return false
  end
  local function pair_ctx(i, j)
    return { po = ctx.po, pn = ctx.pn, level = level,
      oprev = anchor(so, O[i - 1], ctx.unchanged_o[i - 1]), onext = anchor(so, O[i + 1], ctx.unchanged_o[i + 1]),
      nprev = anchor(sn, N[j - 1], ctx.unchanged_n[j - 1]), nnext = anchor(sn, N[j + 1], ctx.unchanged_n[j + 1]) }
  end
  local pi, pj = 1, 1
  local bounds = {}
  for _, q in ipairs(anchors) do bounds[#bounds + 1] = q end
  bounds[#bounds + 1] = { #O + 1, #N + 1 }
  for _, q in ipairs(bounds) do
    local i1, j1 = q[1] - 1, q[2] - 1
    -- The stretch before this anchor: pairs by key, the rest unpaired.
    local keyed = (pi <= i1 and pj <= j1) and lcs(pi, i1, pj, j1, pairable) or {}
    local si, sj = pi, pj
    for _, r in ipairs(keyed) do
      stretch(st, ro, si, r[1] - 1, rn, sj, r[2] - 1, ctx)
      diff_pair(st, O[r[1]], N[r[2]], depth, pair_ctx(r[1], r[2]))
      si, sj = r[1] + 1, r[2] + 1
    end
    stretch(st, ro, si, i1, rn, sj, j1, ctx)
    if q[1] <= #O then diff_pair(st, O[q[1]], N[q[2]], depth, pair_ctx(q[1], q[2])) end
    pi, pj = q[1] + 1, q[2] + 1
  end
end

-- ---- API ---------------------------------------------------------------------------

local function as_unit(u, what)
  if type(u) == "string" then return (source.parse(u, what)) end
  if type(u) ~= "userdata" or not pcall(u.root, u) then
    error(string.format("stepdiff: the %s version must be a kl.source unit or text, not a %s", what, type(u)), 3)
  end
  return u
end

-- The hunks that turn old into new (units or texts), in text order.
function M.diff(old, new)
  old, new = as_unit(old, "old"), as_unit(new, "new")
  local st = { old = side(old), new = side(new), hunks = {} }
  local ro, rn = old:root(), new:root()
  diff_pair(st, { node = ro, a = 1, b = st.old.n + 1 }, { node = rn, a = 1, b = st.new.n + 1 }, 0,
    { po = parent_anchor(st.old, ro), pn = parent_anchor(st.new, rn), level = "item" })
  table.sort(st.hunks, function(x, y)
    if x._an ~= y._an then return x._an < y._an end
    if x._ao ~= y._ao then return x._ao < y._ao end
    return x.new["end"] < y.new["end"]
  end)
  for _, h in ipairs(st.hunks) do h._ao, h._an = nil, nil end
  return st.hunks
end

local function wordy(c) return c ~= "" and c:match("[%w_]") ~= nil end

-- The old text of hunk h for new's bytes b..e, with what keeps it apart
-- from its neighbours when they are not the ones it had: a newline where a
-- directive would run on into code (a #define before it, or one it ends
-- with, or one it starts with after code on the line), a space where two
-- words would join. Reverting every hunk never needs one; reverting some
-- may (a hunk that began the old file lands after a #define).
local function seams(h, text, b, e, ends_at, left_done, right_done)
  local t = h.old.text
  local before = b > 1 and text:sub(b - 1, b - 1) or ""
  local prev_kind = b > 1 and ends_at[b - 1] or nil
  local after = text:sub(e + 1, e + 1)
  local last_kind = h.old.last_kind or prev_kind -- what ends before the suffix
  local function starts_line(x) return x:match("^[ \t]*\n") ~= nil end
  if t ~= "" and not left_done then
    if prev_kind == "pp" and not starts_line(t) then t = "\n" .. t
    elseif h.old.first_kind == "pp" and before ~= "" and before ~= "\n" and not t:match("^[^#]*\n") then t = "\n" .. t
    elseif wordy(before) and wordy(t:sub(1, 1)) then t = " " .. t end
  end
  local tail = text:sub(e + 1)
  if right_done or (t == "" and left_done) then return t end
  if last_kind == "pp" and tail ~= "" and not starts_line(tail) and not (t == "" and b == 1) then t = t .. "\n"
  elseif wordy(t ~= "" and t:sub(-1) or before) and wordy(after) then t = t .. " " end
  return t
end

-- Turns new back into old for the hunks chosen (which: nil for all, an
-- index, or a list of indices into hunks). Returns the text and the edit
-- script (match.splice's), or nil, failure when a hunk's new text is not
-- what the unit holds there (hunks of another step or unit).
function M.revert(new, hunks, which)
  new = as_unit(new, "new")
  if type(hunks) ~= "table" then error("stepdiff.revert: hunks must be a list, not a " .. type(hunks), 2) end
  local chosen = {}
  if which == nil then
    for i = 1, #hunks do chosen[i] = i end
  elseif math.type(which) == "integer" then
    chosen[1] = which
  elseif type(which) == "table" then
    for i, k in ipairs(which) do chosen[i] = k end
  else
    error("stepdiff.revert: which must be nil, an index or a list of indices, not a " .. type(which), 2)
  end
  local sn = side(new)
  local text = sn.text
  local ends_at = {} -- 0-based end offset of each token with text -> its kind
  for i = 1, sn.n - 1 do ends_at[sn.tb[i + 1]] = sn.toks[i].kind end
  local edits, seen = {}, {}
  for _, k in ipairs(chosen) do
    if math.type(k) ~= "integer" or not hunks[k] then
      error(string.format("stepdiff.revert: no hunk %s (there are %d)", tostring(k), #hunks), 2)
    end
  end
  -- Hunks in text order, so the old texts of deletions at one point come
  -- back in their old order (match.splice joins them in list order).
  table.sort(chosen)
  local list = {}
  for _, k in ipairs(chosen) do
    local h = hunks[k]
    if not seen[k] then
      seen[k] = true
      local b, e = h.new.begin, h.new["end"]
      if type(h.new) ~= "table" or type(h.old) ~= "table" or math.type(b) ~= "integer" or math.type(e) ~= "integer"
          or b < 1 or e < b - 1 or e > #text or text:sub(b, e) ~= h.new.text or type(h.old.text) ~= "string" then
        return nil, verdicts.failure("bad_input", string.format(
          "hunk %d does not fit this unit: bytes %s..%s do not hold its new text", k, tostring(b), tostring(e)))
      end
      list[#list + 1] = h
    end
  end
  for i, h in ipairs(list) do
    local b, e = h.new.begin, h.new["end"]
    -- A seam next to another reverted hunk is a seam of the old text.
    local left = i > 1 and list[i - 1].new["end"] == b - 1
    local right = i < #list and list[i + 1].new.begin == e + 1
    edits[i] = { begin = b, ["end"] = e, text = seams(h, text, b, e, ends_at, left, right) }
  end
  return match.splice(new, edits)
end

return M
