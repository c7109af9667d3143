-- The kl.match pattern language, parsed with LPeg into a plain Lua table.
--
-- A pattern is CUDA code in which these stand for code:
--   $X            an expression (a statement where a statement goes: `$S`)
--   $X:expr       an expression, explicitly;  $S:stmt a statement
--   $...XS        a sequence of arguments or statements (possibly empty)
--   $N:int        an integer literal
--   $T:type       a type
--   $id:ident     an identifier
--   ...           anything in between (statements, arguments, tokens);
--                 between statements it also looks into nested statements:
--                 `if ($c) { ... __syncthreads(); ... }` finds a barrier
--                 inside a loop inside the if
-- A name used twice must bind structurally equal code.
--
-- Where a bare metavariable could be either, position decides: a statement
-- where a statement goes and no `;` follows (`$X;` is an expression
-- statement; a pattern that is only `$S` or `$S1` is a statement), an
-- identifier in a declarator, a type only with :type (or as the type of a
-- simple declaration), else an expression.
--
--   pattern.parse(text) -> pat | nil, message, err
--     pat = { source, shape = "expr" | "stmts", root, root_kinds, root_op,
--             child_kind, child_op, tree,
--             tokens = { {text, kind, s, e, row, col, slot, sort, ctx} },
--             metas = { {name, sort} }, slots = { name... },
--             literals = { text... }, warnings = { text... } }
--     err = { row, col, message, line, caret }
--   pattern.template(text) -> { text, uses = { {name, s, e} } } | nil, message, err
-- What patterns reach: expressions and statements in function bodies
-- (template arguments included: `f<$N>($x)`), declarations at file scope
-- and in bodies (`__shared__ float $t[$N];`), and directives as literal
-- text (`#pragma unroll`, `#pragma unroll 4`, `#define BM 64`). What they
-- do not reach, and the structured API (kl.source) to use instead, each a
-- bad_input error here rather than a pattern that silently finds nothing:
--   a metavariable inside a directive (`#define BM $N:int`, `#pragma unroll
--     $N`): unit:defines(), stmt:pragmas();
--   `__launch_bounds__(...)`: fn:launch_bounds();
--   function headers, templates, parameter declarations (`const float
--     *__restrict__ $p`): unit:functions(), fn:params(), fn:info().
-- A template's directive is copied as text too: a metavariable inside one
-- is the same error.
-- The message is "row:col: what" followed by the pattern line and a caret
-- line. The table is what kl.match.pattern turns into flat steps in C:
-- root_kinds (kl.source kind names) and root_op drive dispatch, the slots
-- name the metavariables and then one hidden slot per `...`.
local lpeg = require "lpeg"
local P, R, S, V = lpeg.P, lpeg.R, lpeg.S, lpeg.V
local C, Cp, Ct, Cc, Cg, Cmt, Carg = lpeg.C, lpeg.Cp, lpeg.Ct, lpeg.Cc, lpeg.Cg, lpeg.Cmt, lpeg.Carg

local verdicts = require "klineage.base.verdicts"

local M = {}

M.keywords = {}
for w in ([[
if else for while do return break continue switch case default goto sizeof typedef struct
union enum const volatile static extern inline auto register signed unsigned void char short
int long float double bool true false nullptr template typename class namespace using new
delete this operator constexpr asm __global__ __device__ __host__ __shared__ __constant__
__restrict__ __forceinline__ __noinline__ __launch_bounds__ static_cast reinterpret_cast
const_cast dynamic_cast
]]):gmatch("%S+") do M.keywords[w] = true end

local builtin_types = {}
for w in ("void char short int long float double bool signed unsigned auto"):gmatch("%S+") do
  builtin_types[w] = true
end
local decl_qualifiers = {}
for w in ("const volatile static extern inline register constexpr __shared__ __constant__ __device__ __restrict__"):gmatch("%S+") do
  decl_qualifiers[w] = true
end
M.sorts = { expr = true, stmt = true, int = true, type = true, ident = true }

-- Lexemes -------------------------------------------------------------------

local space = S" \t\r\n\f\v" + P"\\\n"
local comment = P"//" * (1 - P"\n")^0 + P"/*" * (1 - P"*/")^0 * P"*/"
local skip = (space + comment)^0

local ident_start = R("az", "AZ", "__")
local ident_char = R("az", "AZ", "09", "__")
local name_raw = ident_start * ident_char^0
local digits = R"09" * (R"09" + P"'" * #R"09")^0
local number_raw = (P"0" * S"xX" * (R("09", "af", "AF") + P"'")^1
  + (digits * (P"." * digits^-1)^-1 + P"." * digits) * (S"eE" * S"+-"^-1 * digits)^-1)
  * ident_char^0
local string_raw = (S"uUL" + P"u8")^-1 * P'"' * (P"\\" * P(1) + (1 - S'"\\\n'))^0 * P'"'
local char_raw = S"uUL"^-1 * P"'" * (P"\\" * P(1) + (1 - S"'\\\n"))^0 * P"'"
local directive_raw = P"#" * (P"\\\n" + (1 - P"\n"))^0

local punct_list = {
  "<<<", ">>>", "<<=", ">>=", "...", "::", "->", "++", "--", "<<", ">>", "<=", ">=", "==",
  "!=", "&&", "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
  "+", "-", "*", "/", "%", "<", ">", "=", "!", "~", "&", "|", "^", "?", ":", ";", ",", ".",
  "(", ")", "[", "]", "{", "}",
}
local punct_raw = P(false)
for _, p in ipairs(punct_list) do punct_raw = punct_raw + P(p) end

local meta_raw = P"$" * (P"..." * name_raw + name_raw * (P":" * name_raw)^-1)

-- One lexeme, its kind decided by its first characters. A bare `$` or a
-- `$` followed by junk is lexed as "bad" so the error points at it.
local lexeme = C(meta_raw) * Cc"meta"
  + P"$" * C(P(0)) * Cc"bad"
  + C(directive_raw) * Cc"directive"
  + C(string_raw) * Cc"string"
  + C(char_raw) * Cc"char"
  + C(number_raw) * Cc"number"
  + C(name_raw) * Cc"name"
  + C(punct_raw) * Cc"punct"
  + C(P(1)) * Cc"other"

local token_stream = Ct((skip * Ct(Cg(Cp(), "s") * Cg(lexeme / function(t, k) return t end, "text")
  * Cg(Cp(), "e")))^0) * skip * Cp()

-- Classifies raw lexemes into token kinds.
local function classify(text)
  local c = text:sub(1, 1)
  if c == "$" then return "meta" end
  if c == "#" then return "directive" end
  if text == "..." then return "ellipsis" end
  if text:match("^[%a_][%w_]*$") then return M.keywords[text] and "keyword" or "ident" end
  if text:match("^u8?\"") or text:match("^[UL]\"") or c == '"' then return "string" end
  if c == "'" or text:match("^[uUL]'") then return "char" end
  if text:match("^%.?%d") then return "number" end
  return "punct"
end

-- Grammar -------------------------------------------------------------------
-- Each token matcher records how far the parse got, in the state passed as
-- lpeg.Carg(1), so a failure can point at the first token it could not take.

local function reach(pat)
  return Cmt(Carg(1) * pat, function(_, i, st, ...)
    if i > st.furthest then st.furthest = i end
    return i, ...
  end)
end

-- A token whose lexeme satisfies pred(text).
local function tok_if(raw, pred)
  return reach(skip * Cmt(C(raw), function(_, i, t)
    if pred(t) then return i end
    return false
  end))
end

local function sym(s)
  if s:match("^[%a_]") then
    return tok_if(name_raw, function(t) return t == s end)
  end
  return tok_if(punct_raw, function(t) return t == s end)
end

local function node(kind, patt)
  return Ct(Cg(Cp(), "s") * Cg(Cc(kind), "k") * patt * Cg(Cp(), "e"))
end

local Ident = tok_if(name_raw, function(t) return not M.keywords[t] end)
local BuiltinType = tok_if(name_raw, function(t) return builtin_types[t] ~= nil end)
local Qualifier = tok_if(name_raw, function(t) return decl_qualifiers[t] ~= nil end)
local Number = reach(skip * number_raw)
local String = reach(skip * string_raw)
local Char = reach(skip * char_raw)
local Directive = reach(skip * directive_raw)

-- Metavariables: the name, the explicit sort (or nil) and the position
-- context each use of the pattern accepts.
local function meta_with(accept, default_sort, need)
  return reach(skip * Cmt(Cp() * C(meta_raw), function(_, i, s, text)
    if text:sub(2, 4) == "..." then return false end
    local name, sort = text:match("^%$([%a_][%w_]*):?([%w_]*)$")
    if sort == "" then sort = nil end
    if sort and not M.sorts[sort] then return false end
    if sort and not accept[sort] then return false end
    if need == "explicit" and not sort then return false end
    if need == "implicit" and sort then return false end
    return i, { k = "meta", name = name, sort = sort or default_sort, explicit = sort ~= nil, s = s, e = i }
  end))
end
local function seq_meta(ctx)
  return reach(skip * Cmt(Cp() * C(meta_raw), function(_, i, s, text)
    local name = text:match("^%$%.%.%.([%a_][%w_]*)$")
    if not name then return false end
    return i, { k = "seq", name = name, sort = "seq", ctx = ctx, s = s, e = i }
  end))
end
local ExprMeta = meta_with({ expr = true, int = true, ident = true }, "expr")
local StmtMeta = meta_with({ stmt = true }, "stmt")
local TypeMeta = meta_with({ type = true }, "type")
local ExplicitTypeMeta = meta_with({ type = true }, "type", "explicit")
local ImplicitTypeMeta = meta_with({ type = true }, "type", "implicit")
local NameMeta = meta_with({ ident = true }, "ident")

-- A capture-free look at a declarator's name metavariable, for
-- predicates (a predicate must not run value-producing match-time captures).
local RawNameMeta = skip * P"$" * name_raw * P":ident"^-1 * -P":"

local function ellipsis(ctx)
  return skip * node("ellipsis", sym"..." * Cg(Cc(ctx), "ctx"))
end

local function binary_level(next_level, ops)
  local op = P(false)
  for _, o in ipairs(ops) do op = op + sym(o) * Cc(o) end
  return Cmt(Cp() * V(next_level) * Ct((op * V(next_level))^0) * Cp(), function(_, i, s, first, rest, e)
    local acc = first
    for j = 1, #rest, 2 do
      acc = { k = "binary", op = rest[j], acc, rest[j + 1], s = s, e = rest[j + 1].e }
    end
    return i, acc
  end)
end

local function postfix_fold(_, i, base, ops)
  local acc = base
  for _, o in ipairs(ops) do
    table.insert(o, 1, acc)
    o.s = base.s
    acc = o
  end
  return i, acc
end

local grammar = P{
  "Pattern",
  Pattern = Ct(Cg(Cc"expr", "shape") * Cg(V"Expr", "tree") * skip * P(-1))
    + Ct(Cg(Cc"stmts", "shape") * Cg(node("stmts", V"Stmt"^1), "tree") * skip * P(-1)),

  -- Statements.
  Stmt = V"Block" + V"If" + V"For" + V"While" + V"Do" + V"Return" + V"Jump" + V"Pragma"
    + V"EllipsisStmt" + V"SeqStmt" + V"DeclStmt" + V"ExprStmt" + V"MetaStmt" + V"Empty",
  Block = node("block", sym"{" * V"Stmt"^0 * sym"}"),
  If = node("if", sym"if" * sym"(" * V"Expr" * sym")" * V"Stmt" * (sym"else" * V"Stmt")^-1),
  For = node("for", sym"for" * sym"(" * (ellipsis("header") * #sym")"
      + (V"DeclStmt" + V"ExprStmt" + V"EllipsisStmt" + node("empty", sym";"))
        * (V"Expr" + ellipsis("expr"))^-1 * sym";" * (V"Expr" + ellipsis("expr"))^-1)
    * sym")" * V"Stmt"),
  While = node("while", sym"while" * sym"(" * V"Expr" * sym")" * V"Stmt"),
  Do = node("do", sym"do" * V"Stmt" * sym"while" * sym"(" * V"Expr" * sym")" * sym";"),
  Return = node("return", sym"return" * V"Expr"^-1 * sym";"),
  Jump = node("jump", (sym"break" * Cg(Cc"break", "op") + sym"continue" * Cg(Cc"continue", "op")) * sym";"),
  Pragma = node("pragma", Directive),
  EllipsisStmt = ellipsis("stmts") * sym";"^-1,
  SeqStmt = seq_meta("stmts") * sym";"^-1,
  ExprStmt = node("expr_stmt", V"Expr" * sym";"),
  MetaStmt = StmtMeta,
  Empty = node("empty", sym";"),

  -- Declarations: qualifiers, a type, declarators. A user type name must be
  -- followed by something only a declarator can start with.
  -- A type metavariable without :type declares only with a plain
  -- declarator, so `$S foo(x);` stays a statement and a call.
  DeclStmt = node("decl", V"DeclSpec" * V"Declarator" * (sym"," * V"Declarator")^0 * sym";")
    + node("decl", Qualifier^0 * node("type", ImplicitTypeMeta) * Qualifier^0 * V"PlainDeclarator"
      * (sym"," * V"PlainDeclarator")^0 * sym";"),
  DeclSpec = Qualifier^0 * V"TypeSpec" * Qualifier^0,
  TypeSpec = node("type", ExplicitTypeMeta + BuiltinType^1
    + V"ScopedName" * V"TemplateArgs"^-1 * #(Qualifier^0 * (sym"*" + sym"&")^0 * (Ident + RawNameMeta))),
  ScopedName = sym"::"^-1 * Ident * (sym"::" * Ident)^0,
  TemplateArgs = sym"<" * V"TemplateArg" * (sym"," * V"TemplateArg")^0 * sym">",
  TemplateArg = V"TypeName" + V"Shift",
  -- Where an expression could stand too (sizeof, template arguments), a
  -- metavariable is a type only when it says :type.
  TypeName = node("type", Qualifier^0 * (ExplicitTypeMeta + BuiltinType^1 + V"ScopedName" * V"TemplateArgs"^-1)
    * Qualifier^0 * (sym"*" + sym"&" + Qualifier)^0),
  CxxCastType = node("type", Qualifier^0 * (TypeMeta + BuiltinType^1 + V"ScopedName" * V"TemplateArgs"^-1)
    * Qualifier^0 * (sym"*" + sym"&" + Qualifier)^0),
  Declarator = node("declarator", (sym"*" + sym"&" + Qualifier)^0 * (Ident + NameMeta)
    * (sym"[" * V"Expr"^-1 * sym"]")^0 * (sym"=" * V"Init" + sym"(" * V"Args" * sym")")^-1),
  PlainDeclarator = node("declarator", (sym"*" + sym"&" + Qualifier)^0 * (Ident + NameMeta)
    * (sym"[" * V"Expr"^-1 * sym"]")^0 * (sym"=" * V"Init")^-1),
  Init = V"InitList" + V"Assign",
  InitList = node("init_list", sym"{" * (V"Arg" * (sym"," * V"Arg")^0 * sym","^-1)^-1 * sym"}"),

  -- Expressions, C precedence.
  Expr = Cmt(Cp() * V"Assign" * Ct((sym"," * V"Assign")^0), function(_, i, s, first, rest)
    if #rest == 0 then return i, first end
    local n = { k = "comma", first, s = s }
    for _, r in ipairs(rest) do n[#n + 1] = r end
    n.e = rest[#rest].e
    return i, n
  end),
  Assign = Cmt(Cp() * V"Cond" * (V"AssignOp" * V"Assign")^-1, function(_, i, s, lhs, op, rhs)
    if not op then return i, lhs end
    return i, { k = "assign", op = op, lhs, rhs, s = s, e = rhs.e }
  end),
  AssignOp = (sym"=" * Cc"=" + sym"+=" * Cc"+=" + sym"-=" * Cc"-=" + sym"*=" * Cc"*="
    + sym"/=" * Cc"/=" + sym"%=" * Cc"%=" + sym"&=" * Cc"&=" + sym"|=" * Cc"|="
    + sym"^=" * Cc"^=" + sym"<<=" * Cc"<<=" + sym">>=" * Cc">>="),
  Cond = Cmt(Cp() * V"LOr" * (sym"?" * V"Expr" * sym":" * V"Cond")^-1 * Cp(), function(_, i, s, c, a, b, e)
    if not b then return i, c end
    return i, { k = "cond", c, a, b, s = s, e = e }
  end),
  LOr = binary_level("LAnd", { "||" }),
  LAnd = binary_level("BOr", { "&&" }),
  BOr = binary_level("BXor", { "|" }),
  BXor = binary_level("BAnd", { "^" }),
  BAnd = binary_level("Eq", { "&" }),
  Eq = binary_level("Rel", { "==", "!=" }),
  Rel = binary_level("Shift", { "<=", ">=", "<", ">" }),
  Shift = binary_level("Add", { "<<", ">>" }),
  Add = binary_level("Mul", { "+", "-" }),
  Mul = binary_level("Unary", { "*", "/", "%" }),
  Unary = node("unary", Cg((sym"++" * Cc"++" + sym"--" * Cc"--" + sym"+" * Cc"+" + sym"-" * Cc"-"
      + sym"!" * Cc"!" + sym"~" * Cc"~" + sym"*" * Cc"*" + sym"&" * Cc"&"), "op") * V"Unary")
    + node("sizeof", sym"sizeof" * (sym"(" * V"TypeName" * sym")" + V"Unary"))
    + node("cast", sym"(" * V"CastType" * sym")" * V"Unary")
    + V"Postfix",
  -- Only an unambiguous type makes a C cast: a builtin type or $T:type.
  CastType = node("type", Qualifier^0 * (ExplicitTypeMeta + BuiltinType^1) * Qualifier^0 * (sym"*" + Qualifier)^0),
  Postfix = Cmt(V"Primary" * Ct(V"PostOp"^0), postfix_fold),
  PostOp = node("index", sym"[" * V"Expr" * sym"]")
    + node("call", sym"(" * V"Args" * sym")")
    + node("launch", sym"<<<" * V"Args" * sym">>>" * sym"(" * V"Args" * sym")")
    + node("member", Cg(sym"." * Cc"." + sym"->" * Cc"->", "op") * (Ident + NameMeta))
    + node("postfix", Cg(sym"++" * Cc"++" + sym"--" * Cc"--", "op")),
  Args = (V"Arg" * (sym"," * V"Arg")^0)^-1,
  Arg = seq_meta("args") + ellipsis("args") + V"Assign" + V"InitList",
  Primary = ExprMeta
    + node("named_cast", tok_if(name_raw, function(t) return t:match("_cast$") ~= nil end)
      * sym"<" * V"CxxCastType" * sym">" * sym"(" * V"Expr" * sym")")
    + node("name", V"ScopedName" * V"TemplateArgs" * #sym"(") -- f<128>(x): a call with template arguments
    + node("name", V"ScopedName")
    + node("number", Number) + node("string", String^1) + node("char", Char)
    + node("paren", sym"(" * V"Expr" * sym")")
    + node("name", sym"true" + sym"false" + sym"nullptr" + sym"this")
    + ellipsis("expr"),
}

-- Error reporting -------------------------------------------------------------

local function row_col(text, pos)
  local row, line_start = 1, 1
  for i = 1, pos - 1 do
    if text:byte(i) == 10 then
      row = row + 1
      line_start = i + 1
    end
  end
  return row, pos - line_start + 1, line_start
end

-- "row:col: what" + the line + a caret under the column.
function M.format_error(text, pos, what)
  local row, col, line_start = row_col(text, pos)
  local line_end = text:find("\n", line_start, true)
  local line = text:sub(line_start, (line_end or #text + 1) - 1)
  local caret = line:sub(1, col - 1):gsub("[^\t]", " ") .. "^"
  local err = { row = row, col = col, message = what, line = line, caret = caret }
  return string.format("%d:%d: %s\n%s\n%s", row, col, what, line, caret), err
end

local function describe_at(text, pos)
  local rest = text:sub(pos)
  if rest == "" then return "unexpected end of pattern" end
  local lex = lpeg.match(C(meta_raw) + P"$" * Cc"$" + C(lexeme / function(t) return t end) + C(1), rest)
  if lex == "$" then return "'$' must start a metavariable ($X, $...XS, $N:int, $T:type, $id:ident)" end
  if lex and lex:sub(1, 1) == "$" then
    local sort = lex:match(":(.*)$")
    if sort and not M.sorts[sort] then
      return string.format("unknown metavariable sort '%s' (expected int, type, ident, expr or stmt)", sort)
    end
    return string.format("metavariable '%s' cannot stand here", lex)
  end
  if rest:sub(1, 2) == "/*" then return "unterminated comment" end
  if rest:sub(1, 1) == '"' or rest:sub(1, 1) == "'" then return "unterminated literal" end
  return string.format("unexpected '%s'", lex or rest:sub(1, 1))
end

-- Patterns that could never match -----------------------------------------------
-- The matcher compares a directive as whitespace-collapsed text and does not
-- reach function headers, parameter lists or `__launch_bounds__`: a pattern
-- that needs them is an error that names the structured API to use, never a
-- pattern that silently finds nothing.

local directive_hint = "metavariables inside a preprocessor line never match (a directive is compared as "
  .. "text): use unit:defines() for #define values, stmt:pragmas() for #pragma arguments"

-- The first metavariable inside a directive token: its position, or nil.
local function meta_in_directive(tokens)
  for _, t in ipairs(tokens) do
    if t.kind == "directive" then
      -- t.text is collapsed: find the `$` in the raw pattern text instead
      local at = t.raw:find("%$[%a_.]")
      if at then return t.s + at - 1 end
    end
  end
end

local header_words = {
  __global__ = true, __device__ = true, __host__ = true, template = true, extern = true, static = true,
  inline = true, __forceinline__ = true, __noinline__ = true, typedef = true, struct = true, class = true,
  union = true, enum = true, namespace = true, using = true,
}

-- A message for a parse failure whose cause is a construct patterns do not
-- reach, or nil.
local function unreachable_hint(text, pos)
  local lb = text:find("__launch_bounds__", 1, true)
  if lb then
    return lb, "__launch_bounds__ belongs to a function header, which patterns do not reach: "
      .. "use fn:launch_bounds() (kl.source) to read or edit it"
  end
  local first = text:match("^%s*([%a_][%w_]*)")
  local at = (text:find("%S") or 1)
  if first and header_words[first] then
    return at, string.format("'%s' starts a function header or a top-level declaration, which patterns do not "
      .. "reach: use unit:functions(), fn:params() and fn:info() (kl.source); a declaration at file scope "
      .. "is reachable as a statement pattern (`__shared__ float $t[$N];`)", first)
  end
  if pos > #text:gsub("%s+$", "") and (text:find("__restrict__", 1, true) or text:match("^%s*const%s")) then
    return at, "this reads as a parameter declaration, which patterns do not reach: use fn:params() "
      .. "(kl.source) for parameters and their qualifiers; a local declaration pattern ends with ';'"
  end
end

-- Post-pass ---------------------------------------------------------------------

-- Walks the tree and gives every metavariable use its final sort: an
-- explicit sort anywhere applies to every use of that name.
local function collect_metas(tree)
  local uses, explicit = {}, {}
  local function walk(n)
    if type(n) ~= "table" then return end
    if n.k == "meta" or n.k == "seq" then
      uses[#uses + 1] = n
      if n.explicit then
        if explicit[n.name] and explicit[n.name] ~= n.sort then
          return n, string.format("metavariable '$%s' is declared both :%s and :%s", n.name, explicit[n.name], n.sort)
        end
        explicit[n.name] = n.sort
      end
    end
    for _, c in ipairs(n) do
      local bad, msg = walk(c)
      if bad then return bad, msg end
    end
  end
  local bad, msg = walk(tree)
  if bad then return nil, bad, msg end
  local metas, index = {}, {}
  for _, u in ipairs(uses) do
    if explicit[u.name] and u.k == "meta" then u.sort = explicit[u.name] end
    local key = u.name
    if not index[key] then
      metas[#metas + 1] = { name = u.name, sort = u.sort }
      index[key] = #metas
    elseif (metas[index[key]].sort == "seq") ~= (u.sort == "seq") then
      return nil, u, string.format("'$%s' is used both as a sequence and as a single metavariable", u.name)
    end
    u.slot = index[key]
  end
  return metas, uses
end

-- Pattern tokens in order, each metavariable and `...` use carrying its
-- slot, sort and context.
local function build_tokens(text, tree, uses)
  local raw = lpeg.match(token_stream, text)
  local by_start = {}
  for _, u in ipairs(uses) do
    by_start[u.s + #(text:sub(u.s):match("^%s*"))] = u
  end
  local ellipses = {}
  local function walk(n)
    if type(n) ~= "table" then return end
    if n.k == "ellipsis" then ellipses[#ellipses + 1] = n end
    for _, c in ipairs(n) do walk(c) end
  end
  walk(tree)
  local ell_ctx = {}
  for _, n in ipairs(ellipses) do
    local first = text:find("...", n.s, true)
    ell_ctx[first] = n.ctx
  end
  local tokens = {}
  for _, t in ipairs(raw) do
    local row, col = row_col(text, t.s)
    local tk = { text = t.text, raw = t.text, kind = classify(t.text), s = t.s, e = t.e, row = row, col = col }
    if tk.kind == "meta" then
      local u = by_start[t.s]
      tk.slot, tk.sort, tk.ctx, tk.name = u.slot, u.sort, u.ctx, u.name
    elseif tk.kind == "ellipsis" then
      tk.ctx = ell_ctx[t.s] or "expr"
    elseif tk.kind == "directive" then
      tk.text = tk.text:gsub("\\\n", " "):gsub("%s+", " "):gsub("%s+$", "")
    end
    tokens[#tokens + 1] = tk
  end
  return tokens
end

local function first_node(n)
  -- The node the match starts on, for dispatch: the first statement of a
  -- statement list, or the expression itself.
  if n.k == "stmts" then return n[1] end
  return n
end

-- Pattern node kinds -> the kl.source kinds a match's first node may have.
local root_kinds = {
  ["for"] = { "for" }, ["while"] = { "while" }, ["do"] = { "do" }, ["if"] = { "if" },
  ["return"] = { "return" }, block = { "compound" }, decl = { "decl_stmt", "decl" },
  expr_stmt = { "expr_stmt" }, pragma = { "pragma" }, empty = { "empty_stmt" },
  binary = { "binary" }, comma = { "binary" }, assign = { "assign" }, cond = { "ternary" },
  unary = { "unary" }, postfix = { "postfix" }, call = { "call" }, launch = { "launch" },
  index = { "index" }, member = { "member" }, cast = { "cast" }, named_cast = { "cxx_cast" },
  sizeof = { "sizeof" }, string = { "string_lit" }, char = { "char_lit" }, paren = { "paren" },
  init_list = { "init_list" },
}

local function root_of(pat, root)
  local k = root.k
  if k == "jump" then return { root.op } end
  if k == "pragma" then
    -- kl.source: `#pragma` lines are pragma nodes, every other directive
    -- (#define, #include, #if) a preproc node
    local text = pat.source:sub(root.s, root.e - 1):match("^%s*(.-)%s*$")
    return { text:match("^#%s*pragma%f[^%w_]") and "pragma" or "preproc" }
  end
  if k == "number" then
    local text = pat.source:sub(root.s, root.e - 1):match("^%s*(.-)%s*$")
    local hex = text:match("^0[xX]")
    return { (text:find("[.pP]") or (not hex and text:find("[eE]")) or (not hex and text:find("[fF]$")))
      and "float_lit" or "int_lit" }
  end
  if k == "name" then
    local text = pat.source:sub(root.s, root.e - 1):match("^%s*(.-)%s*$")
    if text == "true" or text == "false" or text == "nullptr" then return { "bool_lit" } end
    if text == "this" then return nil end
    return { "ident" }
  end
  return root_kinds[k]
end

-- Which children of a pattern node correspond, by position, to the
-- kl.source node's children (the rest is not checked): kind -> indexes.
local checked_children = {
  expr_stmt = { 1 }, binary = { 1, 2 }, comma = { 1, 2 }, assign = { 1, 2 }, index = { 1, 2 },
  member = { 1 }, unary = { 1 }, postfix = { 1 }, call = { 1 }, cond = { 1, 2, 3 }, paren = { 1 },
  ["return"] = { 1 }, ["if"] = { 1, 2, 3 }, ["while"] = { 1, 2 }, ["do"] = { 1, 2 },
}
local has_op = { binary = true, comma = true, assign = true, unary = true, postfix = true, member = true }

-- Cheap structural checks below the root, for the prefilter: { path = {i,
-- ...} (0-based child indexes), kind, op } for code (not metavariables)
-- up to three levels down, at most eight.
function M.shape_checks(pat, root)
  local out = {}
  local function visit(n, path)
    if #out >= 8 or #path >= 3 or type(n) ~= "table" then return end
    local idx = checked_children[n.k]
    if not idx then return end
    for _, i in ipairs(idx) do
      local c = n[i]
      if type(c) == "table" and c.k ~= "meta" and c.k ~= "seq" and c.k ~= "ellipsis" then
        local kinds = root_of(pat, c)
        local sub = { table.unpack(path) }
        sub[#sub + 1] = i - 1
        if kinds and #kinds == 1 and #out < 8 then
          local op = has_op[c.k] and (c.k == "comma" and "," or c.op) or nil
          out[#out + 1] = { path = sub, kind = kinds[1], op = op }
        end
        visit(c, sub)
      end
    end
  end
  visit(root, {})
  return out
end

-- Parses pattern text. Returns the pattern table, or nil, failure
-- (bad_input: row:col, the line and a caret; failure.error = { row, col }).
local function parse(text)
  if type(text) ~= "string" then error("pattern.parse: expected a string, got " .. type(text), 2) end
  local st = { furthest = 1 }
  local ok, res = pcall(lpeg.match, grammar, text, 1, st)
  if not ok then
    return nil, M.format_error(text, 1, "pattern nests too deeply")
  end
  if not res then
    local pos = st.furthest
    pos = pos + #(lpeg.match(C(skip), text, pos) or "")
    local at, hint = unreachable_hint(text, pos)
    if at then return nil, M.format_error(text, at, hint) end
    return nil, M.format_error(text, pos, describe_at(text, pos))
  end
  local metas, uses_or_bad, msg = collect_metas(res.tree)
  if not metas then
    return nil, M.format_error(text, uses_or_bad.s, msg)
  end
  local pat = { source = text, shape = res.shape, tree = res.tree, metas = metas, warnings = {} }
  pat.tokens = build_tokens(text, res.tree, uses_or_bad)
  local bad_meta = meta_in_directive(pat.tokens)
  if bad_meta then return nil, M.format_error(text, bad_meta, directive_hint) end
  -- Slots: the metavariables, then one hidden slot per `...`, so a
  -- template can keep what a `...` matched (as `...` again, in order).
  pat.slots = {}
  for i, m in ipairs(metas) do pat.slots[i] = m.name end
  local nell = 0
  for _, t in ipairs(pat.tokens) do
    if t.kind == "ellipsis" then
      nell = nell + 1
      pat.slots[#pat.slots + 1] = "..." .. nell
      t.slot = #pat.slots
    end
  end
  local root = first_node(res.tree)
  pat.root, pat.root_op = root.k, root.op
  if root.k == "comma" then pat.root_op = "," end
  if root.k == "meta" and res.shape == "expr" and not root.explicit and root.name:match("^S%d*$") then
    -- A lone `$S` is the statement metavariable of the issue's examples.
    local stmt = { k = "meta", name = root.name, sort = "stmt", s = root.s, e = root.e, slot = root.slot }
    pat.shape, pat.tree, root = "stmts", { k = "stmts", stmt, s = root.s, e = root.e }, stmt
    pat.tokens[1].sort = "stmt"
    pat.metas[1].sort = "stmt"
  end
  if root.k == "meta" or root.k == "seq" then pat.root = root.sort == "stmt" and "meta_stmt" or "meta" end
  pat.root_kinds = root_of(pat, root)
  if not (root.k == "binary" or root.k == "comma" or root.k == "assign" or root.k == "unary"
      or root.k == "postfix" or root.k == "member") then
    pat.root_op = nil
  end
  -- An expression statement also dispatches on its expression's kind.
  if root.k == "expr_stmt" then
    local e = root[1]
    local kinds = e and root_of(pat, e)
    if kinds and #kinds == 1 then
      pat.child_kind = kinds[1]
      if e.k == "binary" or e.k == "assign" or e.k == "unary" or e.k == "postfix" or e.k == "member" then
        pat.child_op = e.op
      elseif e.k == "comma" then
        pat.child_op = ","
      end
    end
  end
  pat.checks = M.shape_checks(pat, root)
  local seen, literals = {}, {}
  for _, t in ipairs(pat.tokens) do
    if (t.kind == "ident" or t.kind == "keyword") and not seen[t.text] then
      seen[t.text] = true
      literals[#literals + 1] = t.text
    end
  end
  pat.literals = literals
  local any_literal = false
  for _, t in ipairs(pat.tokens) do
    if t.kind ~= "meta" and t.kind ~= "ellipsis" then any_literal = true end
  end
  if not any_literal then
    pat.warnings[#pat.warnings + 1] = "pattern has no literal token: it cannot be prefiltered and is tried at every node"
  end
  return pat
end

-- A rewrite template: any text, in which $NAME, $NAME:sort, $...NAME and
-- `...` (the k-th `...` of the pattern, in order) are replaced by what the
-- match bound. Strings and comments are left alone.
--   template(text) -> { text, uses = { {name, s, e} } } | nil, failure
local function template(text)
  if type(text) ~= "string" then error("pattern.template: expected a string, got " .. type(text), 2) end
  local raw = lpeg.match(token_stream, text)
  local uses, nell = {}, 0
  for _, t in ipairs(raw) do
    if t.text == "" and text:sub(t.s, t.s) == "$" then
      return nil, M.format_error(text, t.s, describe_at(text, t.s))
    end
    local in_directive = t.text:sub(1, 1) == "#" and t.text:find("%$[%a_.]")
    if in_directive then
      return nil, M.format_error(text, t.s + in_directive - 1, "a template's preprocessor line is copied as "
        .. "text: a metavariable inside it would never be replaced; edit #define values with unit:defines() "
        .. "and pragma arguments with stmt:pragmas()")
    end
    if t.text:sub(1, 1) == "$" then
      local name = t.text:match("^%$%.%.%.([%a_][%w_]*)$") or t.text:match("^%$([%a_][%w_]*)")
      local sort = t.text:match("^%$[%a_][%w_]*:(.*)$")
      if sort and not M.sorts[sort] then
        return nil, M.format_error(text, t.s, describe_at(text, t.s))
      end
      uses[#uses + 1] = { name = name, s = t.s, e = t.e }
    elseif t.text == "..." then
      nell = nell + 1
      uses[#uses + 1] = { name = "..." .. nell, s = t.s, e = t.e }
    end
  end
  return { text = text, uses = uses }
end

M.row_col = row_col

-- The boundary: a message and its position become one bad_input failure.
local function lifted(fn)
  return function(text)
    local r, msg, err = fn(text)
    if r == nil then return nil, verdicts.failure("bad_input", msg, { error = err }) end
    return r
  end
end
M.parse, M.template = lifted(parse), lifted(template)
return M
