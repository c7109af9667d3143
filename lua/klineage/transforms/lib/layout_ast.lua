-- Syntax helpers of the vectorize transform: spans, rewriting a node's
-- text, and the loop and statement shapes it reads. Nothing here knows
-- float4.
--
--   span(n) -> begin, end          is(n, kind [, text]) -> bool
--   rewrite(n, { {node, text}... }) -> n's text with those nodes replaced
--   indent_of(n) -> indentation (nil when n does not begin its line), line start
--   close_paren(loop) -> the byte of the `)` closing a for header
--   loop_parts(loop, fn) -> { c, bound, body } of `for (int c = S; c < N; c += STEP)`
--       with S = threadIdx.x (+ blockIdx.x times anything), STEP free of c and threadIdx
--   subscripts(n, c) -> { {node, ptr}... } the p[c] in n, nil if c is used otherwise
--   written(fn) -> { name = true } assigned, incremented or address-taken names
--   mentions(n, name), single_write(e), pure(e) -> bool
local M = {}

local PURE = {}
for w in ("expf exp __expf exp2f logf log __logf log2f sqrtf sqrt rsqrtf fabsf fabs fmaxf fminf fmax fmin max min "
  .. "tanhf sinf cosf __sinf __cosf powf __powf __fdividef erff floorf ceilf truncf roundf copysignf fmaf"):gmatch("%S+") do
  PURE[w] = true
end

local function span(n) local r = { n:range() } return r[5], r[6] end
local function is(n, kind, text) return n and n.kind == kind and (text == nil or n:text() == text) end
M.span, M.is = span, is

-- `text` of node n with the nodes of `subs` ({ node, text }) replaced.
function M.rewrite(n, subs)
  local b, e = span(n)
  local src = tostring(n.unit)
  table.sort(subs, function(x, y) return select(5, x[1]:range()) > select(5, y[1]:range()) end)
  local out = src:sub(b, e)
  for _, s in ipairs(subs) do
    local sb, se = span(s[1])
    out = out:sub(1, sb - b) .. s[2] .. out:sub(se - b + 2)
  end
  return out
end

function M.indent_of(n)
  local b = span(n)
  local src = tostring(n.unit)
  local line_start = b
  while line_start > 1 and src:sub(line_start - 1, line_start - 1) ~= "\n" do line_start = line_start - 1 end
  return src:sub(line_start, b - 1):match("^%s*$") and src:sub(line_start, b - 1) or nil, line_start
end

-- The loop's parts when it is `for (int|unsigned c = S; c < N; c += STEP) BODY`.
function M.loop_parts(loop, fn)
  local init, cond, step = loop:field("init"), loop:field("cond"), loop:field("step")
  local dc = init and init.kind == "decl" and init:declaration()
  if not (dc and #dc.declarators == 1 and (dc.base.text == "int" or dc.base.text == "unsigned")) then return nil end
  local c = dc.declarators[1].name.text
  local s = dc.declarators[1].init
  if not (s and s.text ~= "") then return nil end
  if not (is(cond, "binary") and cond.op == "<" and is(cond:field("lhs"), "ident", c) and cond:field("rhs").kind == "ident") then return nil end
  if not (is(step, "assign") and step.op == "+=" and is(step:field("lhs"), "ident", c)) then return nil end
  for id in step:field("rhs"):walk({ "ident" }) do if id:text() == c then return nil end end
  local start
  for d in init:walk({ "declarator" }) do start = d:field("value") or start end
  local af = start and start:affine(fn)
  -- Thread t of block b starts at element t (+ b times a block's share):
  -- the float4 loop then starts at float4 t, and the elements a thread
  -- takes stay a partition of the row.
  if not (af and af.affine and tostring(af.tx_coef) == "1" and af.const == 0) then return nil end
  for _, t in ipairs(af.terms) do
    if t.var ~= "threadIdx.x" and t.var ~= "blockIdx.x" then return nil end
  end
  for id in step:field("rhs"):walk({ "member" }) do
    if id:text():match("^threadIdx") then return nil end
  end
  return { c = c, bound = cond:field("rhs"), body = loop:field("body"), start = af, step = step:field("rhs") }
end

-- Uses of c in node n: { { index node, pointer name } } or nil when c is
-- used other than as p[c].
function M.subscripts(n, c)
  local out = {}
  for id in n:walk({ "ident" }) do
    if id:text() == c then
      local ix = id:parent()
      if not (is(ix, "index") and ix:field("index").id == id.id and ix:field("object").kind == "ident") then return nil end
      out[#out + 1] = { node = ix, ptr = ix:field("object"):text() }
    end
  end
  return out
end

-- Names that n assigns to, increments or takes the address of.
function M.written(fn)
  local out = {}
  for n in fn:body():walk({ "assign", "unary", "postfix" }) do
    local target = n.kind == "assign" and n:field("lhs") or n:field("operand")
    if n.kind == "assign" or n.op == "++" or n.op == "--" or n.op == "&" then
      if target and target.kind == "ident" then out[target:text()] = true end
    end
  end
  return out
end

-- The byte of the `)` that closes the loop's header.
function M.close_paren(loop)
  local _, e = span(loop:field("step"))
  local src = tostring(loop.unit)
  return src:find(")", e + 1, true)
end

-- Whether name occurs in n.
function M.mentions(n, name)
  for id in n:walk({ "ident" }) do if id:text() == name then return true end end
  return false
end

-- Whether e's only write is its own top-level one: no `s += x` nested
-- inside (a running value the new order would change).
function M.single_write(e)
  for n in e:walk({ "assign", "unary", "postfix" }) do
    if n.id ~= e.id and (n.kind == "assign" or n.op == "++" or n.op == "--") then return false end
  end
  return true
end

-- Whether expression e calls only math functions (no side effect whose
-- order the new thread assignment could change).
function M.pure(e)
  for c in e:walk({ "call" }) do
    if not PURE[c:field("callee"):text()] then return false end
  end
  return true
end

return M
