-- What fast_math needs that support.lua does not have: whether an
-- expression is float (the source model has no types), and text rewrites
-- whose replacements may nest (a / (b / c)).
--
--   lib.types(unit, fn) -> typer;  typer(node) -> "float" | "double" | "int" | nil
--     nil when unknown: every caller treats unknown as "not float".
--   lib.replacement(node, prec, pieces) -> what replaces node: text of
--     precedence level `prec` (lib/precedence.lua) made of pieces
--   lib.render(unit, b, e, repl) -> the text of bytes b..e with every
--     outermost node of `repl` (node id -> replacement) replaced. Pieces are
--     strings, {b, e} byte ranges (the original text, rendered the same
--     way: nesting) and { node = n, need = level }: n's text, replaced or
--     not, in parentheses when its level is below `need`. A replacement in
--     the original text is wrapped when its place there (its parent) binds
--     tighter than it does, and a blank keeps apart the tokens that would
--     otherwise merge at an edge (x-__fdividef(-a, b) -> x- -a / b).
--   lib.range(node) -> b, e;  lib.strip(node) -> node without outer parens
local prec = require "klineage.transforms.lib.precedence"

local M = {}

function M.range(n)
  local r = { n:range() }
  return r[5], r[6]
end

function M.strip(n)
  while n.kind == "paren" do n = n:children()[1] end
  return n
end

-- Vector types whose .x .. .w are floats.
local FVEC = { float1 = true, float2 = true, float3 = true, float4 = true }
local INT = { int = true, unsigned = true, ["unsigned int"] = true, long = true, ["long long"] = true, short = true,
              char = true, size_t = true, ["unsigned long"] = true, ["unsigned long long"] = true, uint32_t = true,
              int32_t = true, int64_t = true, uint64_t = true, bool = true }
-- Float-returning library functions (and those returning their value argument's type).
local FLOAT_FN = {}
for w in ([[expf __expf logf __logf log2f exp2f sinf cosf __sinf __cosf powf __powf sqrtf rsqrtf fabsf fmaxf fminf
  fmaf __fdividef __fmul_rn __fadd_rn __fsub_rn __fmaf_rn __frcp_rn __fsqrt_rn __int_as_float __uint_as_float
  tanhf tanf floorf ceilf truncf roundf]]):gmatch("%S+") do FLOAT_FN[w] = true end
local SHFL = { __shfl_sync = 2, __shfl_xor_sync = 2, __shfl_down_sync = 2, __shfl_up_sync = 2, __ldg = 1 }
local ARITH = { ["+"] = true, ["-"] = true, ["*"] = true, ["/"] = true }

local function base_kind(base)
  base = base:gsub("^%s+", ""):gsub("%s+$", ""):gsub("%s+", " ")
  if base == "float" or base == "double" then return base end
  if FVEC[base] then return "fvec" end
  if INT[base] then return "int" end
end

-- Every declaration of each name in fn (params and locals) and at the top
-- level: { kind, depth } where depth counts '*' and array dims. A name
-- declared twice with different types is unknown (scopes are not tracked).
local function declared(unit, fn)
  local seen = {}
  local function add(name, kind, depth)
    local prev = seen[name]
    if prev == nil then seen[name] = { kind = kind, depth = depth }
    elseif prev and (prev.kind ~= kind or prev.depth ~= depth) then seen[name] = false end
  end
  for _, p in ipairs(fn:params()) do
    if p.name and p.name ~= "" then add(p.name, p.base_span and base_kind(p.base_span.text), p.pointer_depth or 0) end
  end
  local function decls(root)
    for d in root:walk({ "decl" }) do
      local dd = d:declaration()
      if dd and dd.base and not dd.alias then
        for _, x in ipairs(dd.declarators) do
          if x.name then add(x.name.text, base_kind(dd.base.text), (x.stars or 0) + #(x.dims or {})) end
        end
      end
    end
  end
  decls(fn:body())
  local globals = {}
  for _, dd in ipairs(unit:declarations()) do
    if dd.base and not dd.alias then
      for _, x in ipairs(dd.declarators or {}) do
        if x.name and seen[x.name.text] == nil then
          globals[x.name.text] = { kind = base_kind(dd.base.text), depth = (x.stars or 0) + #(x.dims or {}) }
        end
      end
    end
  end
  for k, v in pairs(globals) do if seen[k] == nil then seen[k] = v end end
  return seen
end

-- Return types of the unit's own functions: a name defined more than once
-- with different return types is unknown.
local function returns(unit)
  local out = {}
  for _, f in ipairs(unit:functions()) do
    local info = f:info()
    local rt = info.return_type and base_kind(info.return_type:text())
    local name = f:name()
    if out[name] == nil then out[name] = rt or false elseif out[name] ~= rt then out[name] = false end
  end
  return out
end

function M.types(unit, fn)
  local vars, rets = declared(unit, fn), returns(unit)
  -- A value's type as { kind, depth }, or nil.
  local function val(n)
    local k = n.kind
    if k == "paren" then return val(n:children()[1]) end
    if k == "float_lit" then
      local t = n:text()
      if t:match("[fF]$") and not t:match("^0[xX]") then return { kind = "float", depth = 0 } end
      return { kind = "double", depth = 0 }
    end
    if k == "int_lit" or k == "char_lit" or k == "bool_lit" then return { kind = "int", depth = 0 } end
    if k == "ident" then local v = vars[n:text()]; return v or nil end
    if k == "index" then
      local o = val(n:field("object"))
      if o and o.depth > 0 then return { kind = o.kind, depth = o.depth - 1 } end
      return nil
    end
    if k == "member" then
      local o, m = n:field("object"), n:field("member")
      if n.op == "." and o and m and m:text():match("^[xyzw]$") then
        if o.kind == "ident" and (o:text() == "threadIdx" or o:text() == "blockIdx" or o:text() == "blockDim"
            or o:text() == "gridDim") then return { kind = "int", depth = 0 } end
        local ov = val(o)
        if ov and ov.kind == "fvec" and ov.depth == 0 then return { kind = "float", depth = 0 } end
      end
      return nil
    end
    if k == "cast" then
      local ty = n:field("type")
      local bk = ty and base_kind(ty:text())
      if bk == "float" or bk == "double" or bk == "int" then return { kind = bk, depth = 0 } end
      return nil
    end
    if k == "call" then
      local c = n:field("callee")
      local name = c and c.kind == "ident" and c:text()
      if not name then return nil end
      if rets[name] ~= nil then
        local r = rets[name]
        return r and { kind = r, depth = 0 } or nil
      end
      if FLOAT_FN[name] then return { kind = "float", depth = 0 } end
      if SHFL[name] then
        local a = n:children()[1 + SHFL[name]]
        if name == "__ldg" then local v = a and val(a); return v and v.depth > 0 and { kind = v.kind, depth = v.depth - 1 } or nil end
        return a and val(a) or nil
      end
      return nil
    end
    if k == "unary" and (n.op == "-" or n.op == "+") then return val(n:field("operand") or n:children()[1]) end
    if k == "binary" and ARITH[n.op] then
      local a, b = val(n:field("lhs")), val(n:field("rhs"))
      if not (a and b and a.depth == 0 and b.depth == 0) then return nil end
      if a.kind == "double" or b.kind == "double" then return { kind = "double", depth = 0 } end
      if a.kind == "float" or b.kind == "float" then
        if (a.kind == "float" or a.kind == "int") and (b.kind == "float" or b.kind == "int") then
          return { kind = "float", depth = 0 }
        end
        return nil
      end
      if a.kind == "int" and b.kind == "int" then return { kind = "int", depth = 0 } end
      return nil
    end
    if k == "ternary" then
      local a, b = val(n:field("then")), val(n:field("else"))
      if a and b and a.kind == b.kind and a.depth == 0 and b.depth == 0 then return a end
      return nil
    end
    return nil
  end
  return function(n)
    local v = val(n)
    if v and v.depth == 0 and v.kind ~= "fvec" then return v.kind end
  end
end

function M.replacement(node, level, pieces)
  local b, e = M.range(node)
  return { node = node, b = b, e = e, prec = level, need = prec.slot(node), pieces = pieces }
end

-- Pairs of characters that read as one token when they meet ("--", "/*",
-- two identifier characters): a blank goes between them.
local MERGE = {}
for pair in ("-- ++ -> -= += *= /= %= && &= || |= << <= >> >= == != ^= :: // /* .."):gmatch("%S+") do MERGE[pair] = true end
local function merges(a, b)
  return MERGE[a .. b] or (a:match("[%w_]") and b:match("[%w_]")) ~= nil
end

-- Text appended piece by piece, with a blank where two pieces would merge.
local function buffer()
  local parts, last = {}, ""
  local function add(s)
    if s == "" then return end
    if last ~= "" and merges(last, s:sub(1, 1)) then parts[#parts + 1] = " " end
    parts[#parts + 1] = s
    last = s:sub(-1)
  end
  return add, function() return table.concat(parts) end
end

local render

-- The text of replacement r, in parentheses when it binds looser than `need`.
local function replaced(unit, r, need, repl)
  local add, done = buffer()
  for _, piece in ipairs(r.pieces) do
    if type(piece) == "string" then add(piece)
    elseif piece.node then
      local inner = repl[piece.node.id]
      if inner then add(replaced(unit, inner, piece.need, repl))
      else
        local b, e = M.range(piece.node)
        local text = render(unit, b, e, repl)
        add(prec.of(piece.node) < piece.need and "(" .. text .. ")" or text)
      end
    else add(render(unit, piece[1], piece[2], repl)) end
  end
  local text = done()
  return r.prec < need and "(" .. text .. ")" or text
end

function render(unit, b, e, repl)
  local text = tostring(unit)
  -- The outermost replaced nodes inside [b, e], in order.
  local inner = {}
  for _, r in pairs(repl) do
    if r.b >= b and r.e <= e then inner[#inner + 1] = r end
  end
  table.sort(inner, function(x, y) return x.b < y.b or (x.b == y.b and x.e > y.e) end)
  local add, done = buffer()
  local pos, last = b, b - 1
  for _, r in ipairs(inner) do
    if r.b > last then
      add(text:sub(pos, r.b - 1))
      add(replaced(unit, r, r.need, repl))
      pos, last = r.e + 1, r.e
    end
  end
  add(text:sub(pos, e))
  return done()
end
M.render = render

return M
