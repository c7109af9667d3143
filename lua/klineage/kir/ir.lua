-- The kernel IR: one thread per output point, as plain Lua tables.
--
-- A kernel:
--   { name, entry (the kernel's name), prefix (text before the function:
--     comments, the `@kl launch` line, #defines), header (the function up
--     to its body's `{`), suffix (text after the function),
--     params = { { name, base, stars, const } },
--     launch = { grid = { "expr"... }, block = { "expr"... }, extra, line },
--     uniform = { stmt... }   lets that no thread id enters (before the guard)
--     axes = { axis... }      the output coordinates, in declaration order
--     guard = { cond = expr, form = "return" | "wrap" } | nil
--     body = { stmt... }      the per-point code after the guard
--     schedule = { ... }      what the primitives changed (emit reads it) }
-- An axis: { name, type, dim = "x"|"y"|"z", block = expr | nil (nil: the
--   axis is blockIdx alone), cast = type | nil, extent = expr | nil (its bound
--   in the guard), count = expr | nil (an axis without threads whose grid
--   covers [0, count) exactly: unflatten's top digit) }.
--
-- Expressions: { k = "num", v } { k = "var", name } { k = "member", obj, field }
--   { k = "bin", op, a, b } { k = "un", op, a } { k = "call", fn, args }
--   { k = "index", base, idx } { k = "cast", type, a } { k = "tern", c, a, b }
-- Statements: { s = "let", type, name, init } { s = "assign", lhs, op, rhs }
--   { s = "expr", e } { s = "if", cond, then_, else_ } { s = "for", init (a let),
--   cond, step (a stmt), body } { s = "block", body } { s = "return" }
--   { s = "break" } { s = "continue" } { s = "raw", text, writes, calls }
--   { s = "pragma", text } { s = "discard", e } (`(void)e;`)
-- An "expr" statement that calls a function of the file has refs = { i... }:
-- the argument positions the callee writes through a reference (each a
-- variable, klineage.kir.calls); M.writes says what a statement writes.
local M = {}

local PREC = {
  [","] = 1, ["||"] = 4, ["&&"] = 5, ["|"] = 6, ["^"] = 7, ["&"] = 8, ["=="] = 9, ["!="] = 9,
  ["<"] = 10, ["<="] = 10, [">"] = 10, [">="] = 10, ["<<"] = 11, [">>"] = 11,
  ["+"] = 12, ["-"] = 12, ["*"] = 13, ["/"] = 13, ["%"] = 13,
}
local PREC_TERN, PREC_UNARY, PREC_POSTFIX = 3, 15, 16
M.PREC = PREC

function M.num(v) return { k = "num", v = tostring(v) } end
function M.var(name) return { k = "var", name = name } end
function M.bin(op, a, b) return { k = "bin", op = op, a = a, b = b } end
function M.call(fn, args) return { k = "call", fn = fn, args = args } end
function M.index(base, idx) return { k = "index", base = base, idx = idx } end
function M.member(obj, field) return { k = "member", obj = M.var(obj), field = field } end

local function prec(e)
  if e.k == "bin" then return PREC[e.op] end
  if e.k == "tern" then return PREC_TERN end
  if e.k == "un" or e.k == "cast" then return PREC_UNARY end
  return PREC_POSTFIX + 1
end

local expr_text

local function wrap(e, min)
  local t = expr_text(e)
  if prec(e) < min then return "(" .. t .. ")" end
  return t
end

expr_text = function(e)
  local k = e.k
  if k == "num" then return e.v end
  if k == "var" then return e.name end
  if k == "member" then return wrap(e.obj, PREC_POSTFIX) .. "." .. e.field end
  if k == "bin" then
    local p = PREC[e.op]
    local sep = e.op == "," and ", " or " " .. e.op .. " "
    -- `a || b && c` is right but reads wrong (and compilers warn): parenthesize
    local function side(x, min)
      if e.op == "||" and x.k == "bin" and x.op == "&&" then return "(" .. expr_text(x) .. ")" end
      return wrap(x, min)
    end
    return side(e.a, p) .. sep .. side(e.b, p + 1)
  end
  if k == "un" then
    local inner = wrap(e.a, PREC_UNARY)
    -- "- -x" and "--x" differ: keep a blank between two signs
    if (e.op == "-" or e.op == "+") and inner:sub(1, 1) == e.op then inner = " " .. inner end
    return e.op .. inner
  end
  if k == "cast" then return "(" .. e.type .. ")" .. wrap(e.a, PREC_UNARY) end
  if k == "tern" then return wrap(e.c, PREC_TERN + 1) .. " ? " .. wrap(e.a, PREC_TERN) .. " : " .. wrap(e.b, PREC_TERN) end
  if k == "call" then
    local args = {}
    for i, a in ipairs(e.args) do args[i] = wrap(a, 2) end
    return e.fn .. "(" .. table.concat(args, ", ") .. ")"
  end
  if k == "index" then return wrap(e.base, PREC_POSTFIX) .. "[" .. expr_text(e.idx) .. "]" end
  error("kir.ir: unknown expression kind " .. tostring(k))
end
M.text = expr_text

-- A deep copy with `f(e)` tried first at every node: a non-nil answer
-- replaces the node (not descended into).
function M.map(e, f)
  local r = f(e)
  if r ~= nil then return r end
  local c = {}
  for key, v in pairs(e) do
    if type(v) == "table" then
      if v.k then
        c[key] = M.map(v, f)
      else
        local l = {}
        for i, x in ipairs(v) do l[i] = M.map(x, f) end
        c[key] = l
      end
    else
      c[key] = v
    end
  end
  return c
end

-- Replace the variables named in `by` (name -> expression).
function M.subst(e, by)
  return M.map(e, function(x)
    if x.k == "var" and by[x.name] then return M.copy(by[x.name]) end
  end)
end

function M.copy(e) return M.map(e, function() end) end

-- Calls f on every node of an expression, pre-order.
function M.visit(e, f)
  f(e)
  for _, key in ipairs({ "obj", "a", "b", "c", "base", "idx" }) do
    if e[key] then M.visit(e[key], f) end
  end
  if e.args then
    for _, a in ipairs(e.args) do M.visit(a, f) end
  end
end

-- The variable names an expression reads: { name = true }.
function M.vars(e, into)
  into = into or {}
  M.visit(e, function(x)
    if x.k == "var" then into[x.name] = true end
  end)
  return into
end

function M.equal(a, b) return M.text(a) == M.text(b) end

function M.strip_casts(e)
  return M.map(e, function(x)
    if x.k == "cast" then return M.strip_casts(x.a) end
  end)
end

local NEGATE = { ["<"] = ">=", [">="] = "<", [">"] = "<=", ["<="] = ">", ["=="] = "!=", ["!="] = "==" }

-- The condition's negation, written the way a person would.
function M.negate(e)
  if e.k == "bin" and NEGATE[e.op] then return M.bin(NEGATE[e.op], M.copy(e.a), M.copy(e.b)) end
  if e.k == "bin" and (e.op == "&&" or e.op == "||") then
    return M.bin(e.op == "&&" and "||" or "&&", M.negate(e.a), M.negate(e.b))
  end
  if e.k == "un" and e.op == "!" then return M.copy(e.a) end
  return { k = "un", op = "!", a = M.copy(e) }
end

-- Statement helpers ---------------------------------------------------------

-- Calls f(stmt, depth) on every statement, pre-order, nested bodies included.
function M.walk(stmts, f, depth)
  depth = depth or 0
  for _, s in ipairs(stmts) do
    f(s, depth)
    if s.s == "for" then
      M.walk(s.body, f, depth + 1)
    elseif s.s == "if" then
      M.walk(s.then_, f, depth)
      if s.else_ then M.walk(s.else_, f, depth) end
    elseif s.s == "block" then
      M.walk(s.body, f, depth)
    end
  end
end

-- The expressions a statement holds directly (not those of nested bodies).
function M.exprs(s)
  if s.s == "let" then return { s.init } end
  if s.s == "assign" then return { s.lhs, s.rhs } end
  if s.s == "expr" or s.s == "discard" then return { s.e } end
  if s.s == "if" then return { s.cond } end
  if s.s == "for" then
    local l = { s.cond }
    if s.init then l[#l + 1] = s.init.init end
    if s.step then
      for _, e in ipairs(M.exprs(s.step)) do l[#l + 1] = e end
    end
    return l
  end
  return {}
end

-- The variables a statement writes itself (not its nested bodies):
-- { name = true }: an assignment's variable, a raw loop's writes, the
-- arguments a call writes through references.
function M.writes(s)
  local w = {}
  if s.s == "assign" and s.lhs.k == "var" then w[s.lhs.name] = true end
  if s.s == "raw" then
    for n in pairs(s.writes) do w[n] = true end
  end
  if s.s == "expr" and s.refs then
    for _, i in ipairs(s.refs) do
      local a = s.e.args[i]
      if a and a.k == "un" and a.op == "&" then a = a.a end
      if a and a.k == "var" then w[a.name] = true end
    end
  end
  return w
end

-- Deep copy of a statement list with every expression mapped by f.
function M.map_stmts(stmts, f)
  local out = {}
  for i, s in ipairs(stmts) do
    local c = {}
    for key, v in pairs(s) do
      if key == "body" or key == "then_" or key == "else_" then
        c[key] = M.map_stmts(v, f)
      elseif key == "init" and s.s == "for" and v then
        c[key] = M.map_stmts({ v }, f)[1]
      elseif key == "step" then
        c[key] = M.map_stmts({ v }, f)[1]
      elseif type(v) == "table" and v.k then
        c[key] = M.map(v, f)
      elseif type(v) == "table" then
        local l = {}
        for j, x in pairs(v) do l[j] = x end
        c[key] = l
      else
        c[key] = v
      end
    end
    out[i] = c
  end
  return out
end

function M.copy_stmts(stmts) return M.map_stmts(stmts, function() end) end

function M.subst_stmts(stmts, by)
  return M.map_stmts(stmts, function(x)
    if x.k == "var" and by[x.name] then return M.copy(by[x.name]) end
  end)
end

-- Whether the kernel already names `name`: a parameter, an axis, or a
-- declaration of its uniform, pre-point or per-point code (a name a
-- primitive adds must be none of these).
function M.declares(k, name)
  for _, p in ipairs(k.params or {}) do if p.name == name then return true end end
  for _, a in ipairs(k.axes or {}) do if a.name == name then return true end end
  local hit = false
  for _, list in ipairs({ k.uniform or {}, k.pre or {}, k.body or {} }) do
    M.walk(list, function(s) if s.s == "let" and s.name == name then hit = true end end)
  end
  return hit
end

-- A shallow-new kernel sharing nothing mutable with k.
function M.clone(k)
  local c = {}
  for key, v in pairs(k) do c[key] = v end
  c.uniform = M.copy_stmts(k.uniform)
  c.body = M.copy_stmts(k.body)
  c.axes = {}
  for i, a in ipairs(k.axes) do
    local ac = {}
    for key, v in pairs(a) do ac[key] = v end
    c.axes[i] = ac
  end
  if k.guard then c.guard = { cond = M.copy(k.guard.cond), form = k.guard.form } end
  c.launch = { grid = { table.unpack(k.launch.grid) }, block = { table.unpack(k.launch.block) },
    extra = k.launch.extra, line = k.launch.line, changed = k.launch.changed }
  c.schedule = {}
  for key, v in pairs(k.schedule or {}) do c.schedule[key] = v end
  c.applied = { table.unpack(k.applied or {}) }
  return c
end

function M.axis(k, name)
  for _, a in ipairs(k.axes) do
    if a.name == name then return a end
  end
end

function M.axis_on(k, dim)
  for _, a in ipairs(k.axes) do
    if a.dim == dim then return a end
  end
end

-- The guard as the condition under which a thread has a point (true with
-- no guard): what a schedule keeps as live_ where every thread must reach
-- a barrier.
function M.live(guard)
  if not guard then return M.var("true") end
  return guard.form == "return" and M.negate(guard.cond) or M.copy(guard.cond)
end

-- The thread's linear index within its block over the threaded axes (z
-- outermost, x innermost) and the block's thread count: what a cooperative
-- load into shared memory strides by. nil, nil when no axis is threaded.
function M.block_linear_thread(k)
  local tid, nthreads
  for _, d in ipairs({ "z", "y", "x" }) do
    local ax = M.axis_on(k, d)
    if ax and ax.block then
      local t = M.member("threadIdx", d)
      tid = tid and M.bin("+", M.bin("*", tid, M.copy(ax.block)), t) or t
      nthreads = nthreads and M.bin("*", nthreads, M.copy(ax.block)) or M.copy(ax.block)
    end
  end
  return tid, nthreads
end

return M
