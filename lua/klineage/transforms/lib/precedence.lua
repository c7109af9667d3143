-- C++ operator precedence over kl.source expression nodes, for transforms
-- that put an expression where another stood: they must add parentheses
-- exactly where the new place binds tighter than the expression does.
--
-- Levels, tightest first: PRIMARY (names, literals, calls, indexing,
-- members, postfix, parentheses), UNARY (prefix operators, casts, sizeof),
-- then the binary operators (MUL 13 down to LOR 4), ASSIGN (also ?: and
-- throw, right-associative), COMMA. OPAQUE (0) is a node the parser did not
-- understand: it is wrapped wherever a level is asked.
--
--   prec.of(node) -> the level of the node's outermost operator
--   prec.binary(op) -> the level of binary operator op, or nil
--   prec.slot(node) -> the least level an expression may have to stand
--     where node stands, in its parent, without parentheses
--   prec.LEFT_OF(level), prec.RIGHT_OF(level) -> the least level of the left
--     and right operand of a binary operator of that level
local M = {}

M.PRIMARY, M.UNARY, M.MUL, M.ASSIGN, M.COMMA, M.OPAQUE = 16, 15, 13, 3, 1, 0
-- What a function argument or an initializer may be: anything but a comma.
M.ARG = 2

local BINARY = {
  ["*"] = 13, ["/"] = 13, ["%"] = 13,
  ["+"] = 12, ["-"] = 12,
  ["<<"] = 11, [">>"] = 11,
  ["<"] = 10, [">"] = 10, ["<="] = 10, [">="] = 10,
  ["=="] = 9, ["!="] = 9,
  ["&"] = 8, ["^"] = 7, ["|"] = 6, ["&&"] = 5, ["||"] = 4, [","] = 1,
}

local PRIMARY_KINDS = { ident = true, int_lit = true, float_lit = true, char_lit = true, string_lit = true,
  bool_lit = true, call = true, launch = true, index = true, member = true, postfix = true, paren = true,
  cxx_cast = true, init_list = true, lambda = true }
local UNARY_KINDS = { unary = true, cast = true, sizeof = true, new = true, delete = true }

function M.binary(op) return BINARY[op] end

function M.of(n)
  local k = n.kind
  if PRIMARY_KINDS[k] then return M.PRIMARY end
  if UNARY_KINDS[k] then return M.UNARY end
  if k == "binary" then return BINARY[n.op] or M.OPAQUE end
  if k == "assign" or k == "ternary" or k == "throw" then return M.ASSIGN end
  return M.OPAQUE
end

-- Binary operators group left to right: an equal level may stand on the
-- left (a / b / c is (a / b) / c), only a tighter one on the right.
function M.LEFT_OF(level) return level end
function M.RIGHT_OF(level) return level + 1 end

-- The field node fills in its parent ("lhs", "arg", ...).
local function field_of(parent, n)
  local kids, names = parent:children()
  for i, c in ipairs(kids) do
    if c.id == n.id then return names[i] end
  end
end

-- Where operands must be tighter than unary to stay operands.
local NEEDS_UNARY = { unary = true, cast = true, sizeof = true }
local NEEDS_PRIMARY = { postfix = true }

function M.slot(n)
  local p = n:parent()
  if not p then return M.COMMA end
  local k, field = p.kind, field_of(p, n)
  if k == "binary" then
    local level = BINARY[p.op]
    if not level then return M.PRIMARY end
    return field == "lhs" and M.LEFT_OF(level) or M.RIGHT_OF(level)
  end
  if k == "assign" then return field == "lhs" and M.UNARY or M.ASSIGN end
  if k == "ternary" then
    if field == "cond" then return BINARY["||"] end
    return field == "then" and M.COMMA or M.ASSIGN
  end
  if NEEDS_UNARY[k] then return M.UNARY end
  if NEEDS_PRIMARY[k] then return M.PRIMARY end
  if k == "index" then return field == "object" and M.PRIMARY or M.COMMA end
  if k == "member" then return M.PRIMARY end
  if k == "call" or k == "launch" then return field == "callee" and M.PRIMARY or M.ARG end
  if k == "paren" or k == "expr_stmt" or k == "return" then return M.COMMA end
  -- Initializers, list elements and anything else: no top-level comma.
  return M.ARG
end

return M
