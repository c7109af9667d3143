-- Integer polynomials over names, for index arithmetic: `i * cols + j - cols`
-- becomes { ["cols*i"] = 1, j = 1, cols = -1 }. A monomial's key is its
-- names sorted and joined by "*" ("" is the constant).
--
--   poly.of(expr) -> poly | nil (anything but + - * integer literals and names)
--   poly.sub(a, b), poly.scale(a, n), poly.is_zero(a)
--   poly.split(p, name) -> the coefficient of name (a poly) and the rest
local ir = require "klineage.kir.ir"

local M = {}

M.MAX_TERMS = 256

local function key(names)
  table.sort(names)
  return table.concat(names, "*")
end

local function names_of(k)
  local t = {}
  for n in k:gmatch("[^*]+") do t[#t + 1] = n end
  return t
end

local function add(into, k, c)
  local v = (into[k] or 0) + c
  into[k] = v ~= 0 and v or nil
end

function M.of(e, depth)
  depth = (depth or 0) + 1
  if depth > 64 then return nil end
  e = ir.strip_casts(e)
  if e.k == "num" then
    local n = math.tointeger(tonumber((e.v:gsub("[uUlL]+$", ""))))
    if not n then return nil end
    return n ~= 0 and { [""] = n } or {}
  end
  if e.k == "var" then return { [e.name] = 1 } end
  if e.k == "un" and e.op == "-" then
    local a = M.of(e.a, depth)
    return a and M.scale(a, -1)
  end
  if e.k == "bin" and (e.op == "+" or e.op == "-") then
    local a, b = M.of(e.a, depth), M.of(e.b, depth)
    if not (a and b) then return nil end
    return e.op == "+" and M.add(a, b) or M.sub(a, b)
  end
  if e.k == "bin" and e.op == "*" then
    local a, b = M.of(e.a, depth), M.of(e.b, depth)
    if not (a and b) then return nil end
    local out, na, nb = {}, 0, 0
    for _ in pairs(a) do na = na + 1 end
    for _ in pairs(b) do nb = nb + 1 end
    if na * nb > M.MAX_TERMS then return nil end -- hostile arithmetic: give up, not blow up
    for ka, ca in pairs(a) do
      for kb, cb in pairs(b) do
        local n = names_of(ka)
        for _, x in ipairs(names_of(kb)) do n[#n + 1] = x end
        add(out, key(n), ca * cb)
      end
    end
    return out
  end
  return nil
end

function M.add(a, b)
  local out = {}
  for k, c in pairs(a) do add(out, k, c) end
  for k, c in pairs(b) do add(out, k, c) end
  return out
end

function M.scale(a, n)
  local out = {}
  for k, c in pairs(a) do add(out, k, c * n) end
  return out
end

function M.sub(a, b) return M.add(a, M.scale(b, -1)) end

function M.is_zero(a) return next(a) == nil end

-- The coefficient of `name` (each monomial holding it once) and the rest;
-- nil when name appears squared.
function M.split(p, name)
  local coef, rest = {}, {}
  for k, c in pairs(p) do
    local n, found = {}, 0
    for _, x in ipairs(names_of(k)) do
      if x == name then found = found + 1 else n[#n + 1] = x end
    end
    if found > 1 then return nil end
    if found == 1 then add(coef, key(n), c) else add(rest, k, c) end
  end
  return coef, rest
end

-- The single monomial of p and its integer factor, or nil.
function M.monomial(p)
  local k, c = next(p)
  if k == nil or next(p, k) ~= nil then return nil end
  return k, c
end

return M
