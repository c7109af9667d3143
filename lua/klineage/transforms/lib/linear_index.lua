-- coalesce's second kind of site: a 1-D kernel that splits its global
-- thread index into mixed-radix digits (conv2d v0 -> v1). The digit peeled
-- off first (`i % R`) is the one neighbouring threads differ in; coalesced,
-- it is the output's unit-stride index, and the whole order is the
-- output's layout reversed, so the store's subscript is `i` itself.
--
-- The shape, as the kernel's first statements:
--   long I = (long)blockIdx.x * E + threadIdx.x;  if (I >= (long)TOTAL) return;
--   int D1 = (int)(I % R1);  long REST = I / R1;
--   int Dj = (int)(REST % Rj);  REST /= Rj;           (any number of times)
--   int Dm = (int)(REST % Rm);  int TOP = (int)(REST / Rm);
-- TOTAL is a product of the radices and one more factor (so every order
-- of the digits maps [0, TOTAL) onto the same tuples), and the kernel's one
-- subscript store writes P[I] or P[(((long)TOP * Ra + Da) * Rb + Db) ...]
-- over the same digits and radices (its layout). I, REST and the digits
-- are never written again, and nothing lets threads see one another
-- (__shared__, barriers, warp primitives). Any order of the digits is then
-- the same set of threads doing the same work.
--
--   linear.find(unit, fn) -> fields of a site (direction, key, ...) or nil
--   linear.edits(site) -> the edits that rewrite it
local support = require "klineage.transforms.support"
local tiling = require "klineage.transforms.lib.tiling"

local M = {}

local WRITES = { ["++"] = true, ["--"] = true, ["&"] = true }

local function names(digits)
  local t = {}
  for k, d in ipairs(digits) do t[k] = d[1] end
  return t
end

local function written(fn, name)
  for id in fn:body():walk({ "ident" }) do
    if id:text() == name then
      local p = id:parent()
      if p and p.kind == "assign" and p:field("lhs") and p:field("lhs").id == id.id then return true end
      if p and (p.kind == "unary" or p.kind == "postfix") and WRITES[p.op] then return true end
    end
  end
end

-- The digits { {name, radix}... }, innermost first, the top digit, the rest
-- variable and the statements they span, or nil.
local function decomposition(stmts, i, I)
  local m = function(p, s) return s and tiling.match(p, tiling.tokens(s)) end
  local d = m("int $D = ( int ) ( $I % $R ) ;", stmts[i])
  local r = d and d.I == I and m("long $REST = $I / $R ;", stmts[i + 1])
  if not (r and r.I == I and r.R == d.R) then return nil end
  local digits, rest, j = { { d.D, d.R } }, r.REST, i + 2
  while true do
    local dj = m("int $D = ( int ) ( $REST % $R ) ;", stmts[j])
    if not (dj and dj.REST == rest) then return nil end
    digits[#digits + 1] = { dj.D, dj.R }
    local div = m("$REST /= $R ;", stmts[j + 1])
    if div and div.REST == rest and div.R == dj.R then
      j = j + 2
    else
      local top = m("int $TOP = ( int ) ( $REST / $R ) ;", stmts[j + 1])
      if not (top and top.REST == rest and top.R == dj.R) then return nil end
      return { digits = digits, top = top.TOP, rest = rest, first = stmts[i], last = stmts[j + 1] }
    end
  end
end

-- The store subscript's layout digits, outermost first, or "I".
local function layout(toks, I, n)
  if #toks == 1 and toks[1] == I then return I end
  local p = { string.rep("( ", n - 1) .. "( long ) $TOP" }
  for k = 1, n do p[#p + 1] = "* $R" .. k .. " + $D" .. k .. (k < n and " )" or "") end
  local c = tiling.match(table.concat(p, " "), toks)
  if not c then return nil end
  local out = { top = c.TOP }
  for k = 1, n do out[k] = { c["D" .. k], c["R" .. k] } end
  return out
end

local function text_of(dec, order, I)
  local l = { string.format("int %s = (int)(%s %% %s);", order[1][1], I, order[1][2]),
              string.format("long %s = %s / %s;", dec.rest, I, order[1][2]) }
  for k = 2, #order do
    l[#l + 1] = string.format("int %s = (int)(%s %% %s);", order[k][1], dec.rest, order[k][2])
    l[#l + 1] = k < #order and string.format("%s /= %s;", dec.rest, order[k][2])
      or string.format("int %s = (int)(%s / %s);", dec.top, dec.rest, order[k][2])
  end
  return table.concat(l, "\n  ")
end

local function composed(top, lay)
  local s = "(long)" .. top
  for k, d in ipairs(lay) do s = (k == 1 and s or "(" .. s .. ")") .. " * " .. d[2] .. " + " .. d[1] end
  return s
end

function M.find(unit, fn)
  local stmts = fn:body():children()
  local h = stmts[1] and tiling.match("long $I = ( long ) blockIdx . x * $E + threadIdx . x ;", tiling.tokens(stmts[1]))
  local g = h and stmts[2] and tiling.match("if ( $I >= ( long ) $*TOTAL ) return ;", tiling.tokens(stmts[2]))
  if not (g and g.I == h.I) then return nil end
  local I = h.I
  local dec = decomposition(stmts, 3, I)
  if not dec then return nil end
  -- TOTAL: the radices once each and one more factor
  local factors, n = {}, 0
  for w in (" " .. g.TOTAL .. " "):gmatch(" ([%a_][%w_]*) ") do factors[w] = (factors[w] or 0) + 1; n = n + 1 end
  if g.TOTAL:gsub("[%a_][%w_]*", ""):gsub("[%s%*]", "") ~= "" or n ~= #dec.digits + 1 then return nil end
  for _, d in ipairs(dec.digits) do
    if (factors[d[2]] or 0) < 1 then return nil end
    factors[d[2]] = factors[d[2]] - 1
  end
  -- REST is divided in place by the decomposition itself, the others never change
  for _, name in ipairs({ I, dec.top, table.unpack(names(dec.digits)) }) do
    if written(fn, name) then return nil end
  end
  -- the one store, and every other use of I inside the decomposition
  local store
  for a in fn:body():walk({ "assign" }) do
    local lhs = a:field("lhs")
    if lhs and lhs.kind == "index" then
      if store then return nil end
      store = lhs
    end
  end
  local sub = store and store:field("index")
  local lay = sub and layout(tiling.tokens(sub), I, #dec.digits)
  if not lay then return nil end
  -- I appears in its declaration, the guard, the first digit and REST (and the store when it is P[I]) only
  if #support.uses(fn, I) ~= (lay == I and 5 or 4) then return nil end
  if lay == I then
    lay = { top = dec.top }
    for k = #dec.digits, 1, -1 do lay[#lay + 1] = dec.digits[k] end
  elseif lay.top ~= dec.top then return nil end
  -- the layout names the same digits with the same radices
  local radix = {}
  for _, d in ipairs(dec.digits) do radix[d[1]] = d[2] end
  for _, d in ipairs(lay) do
    if radix[d[1]] ~= d[2] then return nil end
    radix[d[1]] = nil
  end
  if next(radix) then return nil end
  local coalesced = dec.digits[1][1] == lay[#lay][1]
  return { direction = coalesced and "undo" or "apply", key = fn:name() .. ":" .. I, line = stmts[1].line,
           linear = { I = I, dec = dec, layout = lay, store = sub },
           check = string.format("%s splits into digits %s; the output's unit-stride digit is %s", I,
             table.concat(names(dec.digits), ", "),
             lay[#lay][1]) }
end

function M.edits(site)
  local L = site.linear
  local order = {}
  if site.direction == "apply" then
    for k = #L.layout, 1, -1 do order[#order + 1] = L.layout[k] end -- innermost of the layout first
  else
    order[1] = L.layout[1] -- the outermost digit moves innermost, the naive order
    for k = #L.layout, 2, -1 do order[#order + 1] = L.layout[k] end
  end
  local a, b = select(5, L.dec.first:range()), select(6, L.dec.last:range())
  return {
    { begin = a, ["end"] = b, text = text_of(L.dec, order, L.I) },
    { node = L.store, text = site.direction == "apply" and L.I or composed(L.layout.top, L.layout) },
  }
end

return M
