-- kl.source nodes -> kir expressions and statements (klineage.kir.ir).
-- Anything outside the subset raises a refusal ({ refusal = "reason" }),
-- which lift turns into nil, reason. Never trusts the input: depth is
-- capped, every node kind not listed is refused.
local ir = require "klineage.kir.ir"

local M = {}

M.MAX_DEPTH = 200

local function refuse(fmt, ...)
  error({ refusal = string.format(fmt, ...) }, 0)
end
M.refuse = refuse

local function short(node)
  local t = node:text():gsub("%s+", " ")
  if #t > 40 then t = t:sub(1, 37) .. "..." end
  return t
end

local LITERALS = { int_lit = true, float_lit = true, char_lit = true, bool_lit = true }
local UNARY_OK = { ["-"] = true, ["+"] = true, ["!"] = true, ["~"] = true, ["&"] = true }

local expr

expr = function(node, depth)
  depth = (depth or 0) + 1
  if depth > M.MAX_DEPTH then refuse("expression nested deeper than %d", M.MAX_DEPTH) end
  local kind = node.kind
  if kind == "ident" then return ir.var(node:text()) end
  if LITERALS[kind] then return ir.num(node:text()) end
  if kind == "paren" then return expr(node:field("operand"), depth) end
  if kind == "binary" then
    if node.op == "," then refuse("a comma expression (%s)", short(node)) end
    return ir.bin(node.op, expr(node:field("lhs"), depth), expr(node:field("rhs"), depth))
  end
  if kind == "unary" then
    if node.op == "*" then refuse("dereferences a pointer (%s): loads must be subscripts", short(node)) end
    if not UNARY_OK[node.op] then refuse("a side effect inside an expression (%s)", short(node)) end
    return { k = "un", op = node.op, a = expr(node:field("operand"), depth) }
  end
  if kind == "ternary" then
    return { k = "tern", c = expr(node:field("cond"), depth), a = expr(node:field("then"), depth),
      b = expr(node:field("else"), depth) }
  end
  if kind == "call" then
    local callee = node:field("callee")
    if not callee or callee.kind ~= "ident" then refuse("calls something that is not a plain name (%s)", short(node)) end
    if node:field("template_args") then refuse("a template call (%s)", short(node)) end
    local args = {}
    for _, c in ipairs(node:children()) do
      if c.id ~= callee.id then args[#args + 1] = expr(c, depth) end
    end
    return ir.call(callee:text(), args)
  end
  if kind == "index" then
    return ir.index(expr(node:field("object"), depth), expr(node:field("index"), depth))
  end
  if kind == "member" then
    if node.op ~= "." then refuse("a member through a pointer (%s)", short(node)) end
    local obj, mem = node:field("object"), node:field("member")
    return { k = "member", obj = expr(obj, depth), field = mem:text() }
  end
  if kind == "cast" or kind == "cxx_cast" then
    return { k = "cast", type = node:field("type"):text(), a = expr(node:field("operand"), depth) }
  end
  if kind == "sizeof" then return ir.num(node:text()) end
  if kind == "assign" then refuse("an assignment inside an expression (%s)", short(node)) end
  if kind == "postfix" then refuse("a side effect inside an expression (%s)", short(node)) end
  refuse("an expression the IR does not model: %s (%s)", kind, short(node))
end
M.expr = expr

-- The names a raw statement writes: assignment targets, ++/-- operands and
-- the variables whose address it takes (a call may write through it).
local function raw_writes(node)
  local w = {}
  for n in node:walk({ "assign", "postfix", "unary" }) do
    local target
    if n.kind == "assign" then
      target = n:field("lhs")
    elseif n.op == "++" or n.op == "--" or n.op == "&" then
      target = n:field("operand")
    end
    while target and (target.kind == "index" or target.kind == "paren" or target.kind == "member") do
      target = target:field("object") or target:field("operand")
    end
    if target and target.kind == "ident" then w[target:text()] = true end
  end
  return w
end

local stmt

local function stmts_of(node, depth, out)
  out = out or {}
  if node.kind == "compound" then
    for _, c in ipairs(node:children()) do stmt(c, depth, out) end
  else
    stmt(node, depth, out)
  end
  return out
end
M.stmts_of = stmts_of

local function lets_of(decl_node, out, depth)
  local d = decl_node:declaration()
  if not d then refuse("a declaration the parser did not model (%s)", short(decl_node)) end
  if d.shared then refuse("declares __shared__ memory: already scheduled") end
  if d.static or d.extern or d.constant or d.alias then refuse("a static, extern or type declaration in the kernel (%s)", short(decl_node)) end
  if #d.declarators > 1 then
    for _, dd in ipairs(d.declarators) do
      if dd.stars ~= d.declarators[1].stars then refuse("declarators of mixed pointer depth (%s)", short(decl_node)) end
    end
  end
  for _, dd in ipairs(d.declarators) do
    if dd.dims and #dd.dims > 0 then refuse("declares a local array (%s)", short(decl_node)) end
    local init = dd.node:field("value")
    -- the type's text holds the first declarator's stars: the same for all
    out[#out + 1] = { s = "let", type = d.type.text, name = dd.name.text, init = init and expr(init, depth) or nil }
  end
end

local STEP_OPS = { ["="] = true, ["+="] = true, ["-="] = true, ["*="] = true, ["/="] = true, ["%="] = true,
  ["<<="] = true, [">>="] = true, ["&="] = true, ["|="] = true, ["^="] = true }

-- A target is a variable or an element: anything else (a macro call, a
-- dereference) could write anywhere.
local TARGETS = { var = true, index = true }

local function target(node, depth)
  local t = expr(node, depth)
  if not TARGETS[t.k] then refuse("assigns to something that is not a variable or an element (%s)", short(node)) end
  return t
end

local function simple_stmt(e, depth)
  if e.kind == "assign" then
    if not STEP_OPS[e.op] then refuse("an assignment operator the IR does not model (%s)", short(e)) end
    return { s = "assign", lhs = target(e:field("lhs"), depth), op = e.op, rhs = expr(e:field("rhs"), depth) }
  end
  if (e.kind == "postfix" or e.kind == "unary") and (e.op == "++" or e.op == "--") then
    return { s = "assign", lhs = target(e:field("operand"), depth), op = e.op }
  end
  if e.kind == "call" then return { s = "expr", e = expr(e, depth) } end
  if e.kind == "paren" then return simple_stmt(e:field("operand"), depth) end
  if (e.kind == "cast" or e.kind == "cxx_cast") and e:field("type"):text():match("^%s*void%s*$") then
    -- `(void)x;`: a value discarded, no effect (it silences an unused name)
    local v = expr(e:field("operand"), depth)
    ir.visit(v, function(x) if x.k == "call" then refuse("a call cast to void (%s)", short(e)) end end)
    return { s = "discard", e = v }
  end
  refuse("a statement the IR does not model (%s)", short(e))
end

-- The calls of a raw statement: { { fn, args = { name | false } } }, an
-- argument's name when it is a plain variable (lift checks what each
-- callee may write through it).
local function raw_calls(node)
  local calls = {}
  for n in node:walk({ "call" }) do
    local callee = n:field("callee")
    local c = { fn = callee and callee.kind == "ident" and callee:text() or false, args = {} }
    for _, a in ipairs(n:children()) do
      if not callee or a.id ~= callee.id then
        while a.kind == "paren" do a = a:field("operand") end
        c.args[#c.args + 1] = a.kind == "ident" and a:text() or false
      end
    end
    calls[#calls + 1] = c
  end
  return calls
end

-- A `for (T j = E; ; step)` loop that only a break ends, as IR beside its
-- raw text (raw.walk = { init = the let, step, body }): the loop stays
-- opaque to everything but a primitive that reads the walk (segscan's
-- walk back to a segment's start). nil where any part is outside the IR.
local function walk_of(node, depth)
  if node.kind ~= "for" or node:field("cond") then return nil end
  local init, step, body = node:field("init"), node:field("step"), node:field("body")
  if not (init and init.kind == "decl" and step and body) then return nil end
  local ok, w = pcall(function()
    local lets = {}
    lets_of(init, lets, depth)
    if #lets ~= 1 or not lets[1].init then return nil end
    return { init = lets[1], step = simple_stmt(step, depth), body = stmts_of(body, depth) }
  end)
  return ok and w or nil
end

local function raw_loop(node, depth)
  for n in node:walk({ "return", "goto", "label" }) do
    refuse("a %s inside an opaque loop (%s)", n.kind, short(n))
  end
  return { s = "raw", text = node:text(), writes = raw_writes(node), calls = raw_calls(node), loop = true,
           walk = walk_of(node, depth or 0) }
end

local function for_stmt(node, depth, out)
  local init, cond, step, body = node:field("init"), node:field("cond"), node:field("step"), node:field("body")
  local lets = {}
  if init and init.kind == "decl" then lets_of(init, lets, depth) end
  if not (init and init.kind == "decl" and #lets == 1 and lets[1].init and cond and step) then
    out[#out + 1] = raw_loop(node, depth)
    return
  end
  out[#out + 1] = { s = "for", init = lets[1], cond = expr(cond, depth), step = simple_stmt(step, depth),
    body = stmts_of(body, depth) }
end

stmt = function(node, depth, out)
  depth = (depth or 0) + 1
  if depth > M.MAX_DEPTH then refuse("statements nested deeper than %d", M.MAX_DEPTH) end
  local kind = node.kind
  if kind == "compound" then
    out[#out + 1] = { s = "block", body = stmts_of(node, depth) }
  elseif kind == "decl_stmt" then
    lets_of(node, out, depth)
  elseif kind == "expr_stmt" then
    out[#out + 1] = simple_stmt(node:field("value"), depth)
  elseif kind == "if" then
    local th, el = node:field("then"), node:field("else")
    out[#out + 1] = { s = "if", cond = expr(node:field("cond"), depth), then_ = stmts_of(th, depth),
      else_ = el and stmts_of(el, depth) or nil }
  elseif kind == "for" then
    for_stmt(node, depth, out)
  elseif kind == "while" or kind == "do" then
    out[#out + 1] = raw_loop(node)
  elseif kind == "return" then
    if node:field("value") then refuse("returns a value") end
    out[#out + 1] = { s = "return" }
  elseif kind == "break" or kind == "continue" then
    out[#out + 1] = { s = kind }
  elseif kind == "empty_stmt" then
    return
  elseif kind == "pragma" then
    out[#out + 1] = { s = "pragma", text = node:text() }
  elseif kind == "goto" or kind == "label" then
    refuse("uses goto or a label")
  else
    refuse("a statement the IR does not model: %s (%s)", kind, short(node))
  end
end
M.stmt = stmt

return M
