-- A walk step's diff, unified, built from klineage.pattern.stepdiff's hunks (the
-- statements and items the step changed), with the bytes of each hunk
-- highlighted inside its lines.
--
--   diff.unified(old, new [, { context = 3, old_name, new_name }])
--     -> { text = the unified diff (for report.md), html = <pre class="diff">
--          with a <mark> around each hunk's changed text (for the page),
--          hunks = the number of stepdiff hunks, lines = { added, removed } }
--        | nil, failure (bad_input) when stepdiff cannot pair the two
--
-- A line is in a hunk's span when the hunk covers a character of it that is
-- not white space, or covers the whole line: a hunk's range starts at its
-- leading white space, which often begins on the line before, and that
-- line did not change. The unchanged lines between two hunks are shown
-- once, from the old text.
local escape = require "klineage.report.escape"
local stepdiff = require "klineage.pattern.stepdiff"
local verdicts = require "klineage.base.verdicts"

local M = {}

local function split(text)
  local lines, pos = {}, 1
  while pos <= #text do
    local nl = text:find("\n", pos, true)
    if nl then
      lines[#lines + 1] = { s = pos, e = nl - 1, nl = nl }
      pos = nl + 1
    else
      lines[#lines + 1] = { s = pos, e = #text }
      pos = #text + 1
    end
  end
  return lines
end

local function line_of(lines, pos)
  local lo, hi = 1, #lines
  while lo < hi do
    local mid = (lo + hi + 1) // 2
    if lines[mid].s <= pos then lo = mid else hi = mid - 1 end
  end
  return lo
end

-- The lines a byte range changes, or (nil, anchor): the line before which
-- an empty span sits.
local function span(text, lines, b, e)
  local first, last
  if #lines > 0 and e >= b then
    for i = line_of(lines, b), line_of(lines, e) do
      local L = lines[i]
      local cb, ce = math.max(b, L.s), math.min(e, L.e)
      local visible = cb <= ce and text:sub(cb, ce):find("%S") ~= nil
      local whole = b <= L.s and e >= (L.nl or L.e)
      if visible or whole then
        first = first or i
        last = i
      end
    end
  end
  if first then return first, last end
  for i, L in ipairs(lines) do
    if L.s >= b then return nil, nil, i end
  end
  return nil, nil, #lines + 1
end

local function side_of(text, lines, r)
  local first, last, anchor = span(text, lines, r.begin, r["end"])
  if first then return { first = first, last = last, b = r.begin, e = r["end"] } end
  return { first = anchor, last = anchor - 1, b = r.begin, e = r["end"] }
end

-- The parts of line L inside ranges, without their outer white space.
local function segments(text, L, ranges)
  local segs = {}
  for _, r in ipairs(ranges) do
    local b, e = math.max(r.b, L.s), math.min(r.e, L.e)
    if b <= e then
      local piece = text:sub(b, e)
      local lead, trail = #piece:match("^%s*"), #piece:match("%s*$")
      if lead < #piece then segs[#segs + 1] = { b + lead, e - trail } end
    end
  end
  return segs
end

-- A line's HTML: its text, with the segments (absolute byte ranges) marked.
local function marked(text, L, segs)
  table.sort(segs, function(x, y) return x[1] < y[1] end)
  local out, pos = {}, L.s
  for _, s in ipairs(segs) do
    local b = math.max(s[1], pos)
    if b <= s[2] then
      out[#out + 1] = escape.html(text:sub(pos, b - 1))
      out[#out + 1] = "<mark>" .. escape.html(text:sub(b, s[2])) .. "</mark>"
      pos = s[2] + 1
    end
  end
  out[#out + 1] = escape.html(text:sub(pos, L.e))
  return table.concat(out)
end

local function line_text(text, L) return text:sub(L.s, L.e) end

-- A hunk's spans without the lines its two sides share at either end
-- (a statement's leading comments come with it), and the marks of each
-- line left: where one old line faces one new line, the characters that
-- differ between them; otherwise the hunk's own bytes.
local function trim(it, old, ol, new, nl)
  local o, n = it.o, it.n
  while o.first <= o.last and n.first <= n.last and line_text(old, ol[o.first]) == line_text(new, nl[n.first]) do
    o.first, n.first = o.first + 1, n.first + 1
  end
  while o.first <= o.last and n.first <= n.last and line_text(old, ol[o.last]) == line_text(new, nl[n.last]) do
    o.last, n.last = o.last - 1, n.last - 1
  end
  it.omarks, it.nmarks = {}, {}
  if o.last - o.first == n.last - n.first and o.first <= o.last then
    for k = 0, o.last - o.first do
      local a, b = ol[o.first + k], nl[n.first + k]
      local ta, tb = line_text(old, a), line_text(new, b)
      local p = 0
      while p < #ta and p < #tb and ta:byte(p + 1) == tb:byte(p + 1) do p = p + 1 end
      local q = 0
      while q < #ta - p and q < #tb - p and ta:byte(#ta - q) == tb:byte(#tb - q) do q = q + 1 end
      it.omarks[o.first + k] = p < #ta - q and { { a.s + p, a.e - q } } or {}
      it.nmarks[n.first + k] = p < #tb - q and { { b.s + p, b.e - q } } or {}
    end
  else
    for i = o.first, o.last do it.omarks[i] = segments(old, ol[i], { o }) end
    for i = n.first, n.last do it.nmarks[i] = segments(new, nl[i], { n }) end
  end
end

function M.unified(old, new, opts)
  opts = opts or {}
  local context = opts.context or 3
  local ok, hunks = pcall(stepdiff.diff, old, new)
  if not ok then
    return nil, verdicts.failure("bad_input", "the two kernels could not be diffed: " .. tostring(hunks):gsub("\n.*", ""))
  end
  local ol, nl = split(old), split(new)
  local items = {}
  for _, h in ipairs(hunks) do
    local it = { o = side_of(old, ol, h.old), n = side_of(new, nl, h.new) }
    trim(it, old, ol, new, nl)
    -- a hunk of white space at line ends only leaves no line to show
    if it.o.first <= it.o.last or it.n.first <= it.n.last then items[#items + 1] = it end
  end
  -- Groups: hunks whose spans are close enough to share their context.
  local groups = {}
  for _, it in ipairs(items) do
    local g = groups[#groups]
    if g and (it.o.first <= g.olast + 1 + 2 * context or it.n.first <= g.nlast + 1) then
      g.items[#g.items + 1] = it
      g.olast, g.nlast = math.max(g.olast, it.o.last), math.max(g.nlast, it.n.last)
    else
      groups[#groups + 1] = { items = { it }, ofirst = it.o.first, nfirst = it.n.first, olast = it.o.last, nlast = it.n.last }
    end
  end
  local text_lines, html_lines = {}, {}
  local added, removed = 0, 0
  local function emit(kind, src, L, segs)
    local sign = kind == "del" and "-" or kind == "add" and "+" or " "
    text_lines[#text_lines + 1] = sign .. escape.utf8(src:sub(L.s, L.e))
    local body = segs and marked(src, L, segs) or escape.html(src:sub(L.s, L.e))
    html_lines[#html_lines + 1] = string.format('<span class="%s">%s%s</span>', kind, sign, body)
  end
  if opts.old_name or opts.new_name then
    for _, pair in ipairs({ { "--- ", opts.old_name or "old" }, { "+++ ", opts.new_name or "new" } }) do
      text_lines[#text_lines + 1] = pair[1] .. escape.utf8(pair[2]):gsub("[%c]", " ")
      html_lines[#html_lines + 1] = '<span class="file">' .. escape.html(pair[1] .. pair[2]) .. "</span>"
    end
  end
  for _, g in ipairs(groups) do
    local o0 = math.max(1, g.ofirst - context)
    local o9 = math.min(#ol, g.olast + context)
    local n0 = math.max(1, g.nfirst - (g.ofirst - o0))
    local body_t, body_h = #text_lines, #html_lines
    text_lines[#text_lines + 1], html_lines[#html_lines + 1] = "", "" -- the header, once its counts are known
    local ocount, ncount, at = 0, 0, o0
    local omarks, nmarks = {}, {}
    for _, it in ipairs(g.items) do
      for i, m in pairs(it.omarks) do omarks[i] = table.move(m, 1, #m, #(omarks[i] or {}) + 1, omarks[i] or {}) end
      for i, m in pairs(it.nmarks) do nmarks[i] = table.move(m, 1, #m, #(nmarks[i] or {}) + 1, nmarks[i] or {}) end
    end
    local done_new = {}
    for _, it in ipairs(g.items) do
      for i = at, it.o.first - 1 do
        emit("ctx", old, ol[i])
        ocount, ncount = ocount + 1, ncount + 1
      end
      for i = math.max(at, it.o.first), it.o.last do
        emit("del", old, ol[i], omarks[i] or {})
        ocount, removed = ocount + 1, removed + 1
      end
      for i = it.n.first, it.n.last do
        if not done_new[i] then
          done_new[i] = true
          emit("add", new, nl[i], nmarks[i] or {})
          ncount, added = ncount + 1, added + 1
        end
      end
      at = math.max(at, it.o.last + 1)
    end
    for i = at, o9 do
      emit("ctx", old, ol[i])
      ocount, ncount = ocount + 1, ncount + 1
    end
    local header = string.format("@@ -%d,%d +%d,%d @@", o0, ocount, n0, ncount)
    text_lines[body_t + 1] = header
    html_lines[body_h + 1] = '<span class="hunk">' .. header .. "</span>"
  end
  local html
  if #groups == 0 then
    html = '<p class="diff-none">The two kernels are the same text.</p>'
  else
    -- one block per line: a newline between them would show as an empty line
    html = '<pre class="diff"><code>' .. table.concat(html_lines) .. "</code></pre>"
  end
  return { text = table.concat(text_lines, "\n") .. "\n", html = html, hunks = #hunks, lines = { added = added, removed = removed } }
end

return M
