-- The kernel's `// @kl launch grid(...) block(...) [smem(...)]` line: read
-- it, write it back with a new geometry (what annotations.lua evaluates).
--
--   launch.find(unit, kernel) -> { grid = {...}, block = {...}, extra, line, named } | nil, reason
--   launch.render(l) -> "launch grid(...) block(...)"
--   launch.rewrite(prefix, l) -> prefix with the kernel's launch line replaced | nil, reason
--   launch.annotation_text(expr) -> the expression in the annotation language | nil
--   launch.annotation_of(k, expr) -> the same, the kernel's uniform lets spelled out first
local ir = require "klineage.kir.ir"

local M = {}

local function split_args(s)
  local out, depth, start = {}, 0, 1
  for i = 1, #s do
    local c = s:sub(i, i)
    if c == "(" then depth = depth + 1 elseif c == ")" then depth = depth - 1
    elseif c == "," and depth == 0 then
      out[#out + 1] = s:sub(start, i - 1):match("^%s*(.-)%s*$")
      start = i + 1
    end
  end
  out[#out + 1] = s:sub(start):match("^%s*(.-)%s*$")
  return out
end

-- The text of `word(...)` (balanced) in s, and where it ends.
local function call_args(s, word)
  local b = s:find(word .. "%s*%(")
  if not b then return nil end
  local open = s:find("(", b, true)
  local depth = 0
  for i = open, #s do
    local c = s:sub(i, i)
    if c == "(" then depth = depth + 1 elseif c == ")" then
      depth = depth - 1
      if depth == 0 then return s:sub(open + 1, i - 1), b, i end
    end
  end
end

function M.parse(text)
  local named = text:match("^launch%s*%(%s*([%w_]+)%s*%)")
  local grid = call_args(text, "grid")
  local block = call_args(text, "block")
  if not (grid and block) then return nil end
  local smem = call_args(text, "smem")
  return { grid = split_args(grid), block = split_args(block), smem = smem, named = named, line = text }
end

function M.find(unit, kernel)
  local plain, mine
  for _, a in ipairs(unit:annotations()) do
    if a.text:match("^launch") then
      local l = M.parse(a.text)
      if l and l.named == kernel then mine = l elseif l and not l.named then plain = plain or l end
    end
  end
  local l = mine or plain
  if not l then return nil, "no // @kl launch grid(...) block(...) line: the geometry is unknown" end
  if #l.grid > 3 or #l.block > 3 then return nil, "a launch line with more than three dimensions" end
  return l
end

function M.render(l)
  local t = "launch" .. (l.named and "(" .. l.named .. ")" or "") .. " grid(" .. table.concat(l.grid, ", ") ..
    ") block(" .. table.concat(l.block, ", ") .. ")"
  if l.smem then t = t .. " smem(" .. l.smem .. ")" end
  return t
end

function M.rewrite(prefix, l)
  local out, done = {}, false
  for line in (prefix .. "\n"):gmatch("(.-)\n") do
    local lead, body = line:match("^(.-@kl%s+)(launch.*)$")
    if lead and not done then
      local parsed = M.parse(body)
      if parsed and parsed.named == l.named then
        line = lead .. M.render(l)
        done = true
      end
    end
    out[#out + 1] = line
  end
  if not done then return nil, "the launch line is not before the kernel: cannot rewrite the geometry" end
  return table.concat(out, "\n")
end

local ANN_OPS = { ["+"] = true, ["-"] = true, ["*"] = true, ["%"] = true }

-- A C bound as an annotation expression: casts dropped, integer suffixes
-- dropped; nil when it needs anything else (a division, a call, a load).
function M.annotation_text(e)
  local ok = true
  local stripped = ir.map(ir.strip_casts(e), function(x)
    -- (X + (B - 1)) / B is cdiv(X, B) for X >= 0: sizes are
    if x.k == "bin" and x.op == "/" and x.b.k == "num" and x.a.k == "bin" and x.a.op == "+" and x.a.b.k == "num" then
      local b, c = math.tointeger(tonumber(x.b.v)), math.tointeger(tonumber(x.a.b.v))
      if b and c and b > 0 and c == b - 1 then
        local inner = M.annotation_text(x.a.a)
        if not inner then ok = false return ir.num(0) end
        return ir.var("cdiv(" .. inner .. ", " .. b .. ")")
      end
    end
    if x.k == "num" then
      local digits = x.v:match("^(%d+)[uUlL]*$")
      if not digits then ok = false end
      return ir.num(digits or x.v)
    end
    if x.k == "bin" and not ANN_OPS[x.op] then ok = false end
    if x.k ~= "bin" and x.k ~= "var" and x.k ~= "num" and x.k ~= "un" then ok = false end
  end)
  if not ok then return nil end
  return ir.text(stripped)
end

-- A bound named by a uniform let (`total`, `OW`) is spelled out first:
-- the launch line knows the workload's parameters, not the kernel's lets.
function M.annotation_of(k, e)
  local uniform = {}
  for _, s in ipairs(k.uniform) do if s.init then uniform[s.name] = s.init end end
  for _ = 1, 4 do e = ir.subst(e, uniform) end
  return M.annotation_text(e)
end

return M
