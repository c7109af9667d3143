-- What register_prefetch checks about memory and text, kept apart from
-- the idiom itself: where a store goes (its root name), which names are
-- shared-memory pointers or register arrays, and whole-line spans.
--
--   lib.range(n) -> b, e
--   lib.line(text, b, e [, comment_ok]) -> lb, le | nil: the line holding
--     bytes b..e alone (blanks before, blanks or a // comment after when
--     comment_ok); lb = its first byte, le = its newline (or #text + 1)
--   lib.indent(text, b) -> the blanks from the line's start to b
--   lib.root(expr) -> the ident node a store through expr lands in, or nil
--   lib.kinds(unit, fn) -> { name = "register" | "shared" | "param" | "other" }
--   lib.flatten(expr, op) -> { nodes... } of a left-nested op chain (a, b, c)
--   lib.norm(s) -> s without blanks
--   lib.stmts(compound) -> its statements, pragmas left out
--   lib.call_of(stmt) -> the call of an expression statement `f(...);`, or nil
--   lib.inside(n, outer) -> whether n lies within outer;  lib.idents(n [, out])
--   lib.written(stmts) -> { name = true } the store roots, ++/-- and & operands
--   lib.load_ok(unit, call, stage) -> nil when the called function writes only
--     the staging arguments and reads global memory only under a conditional
--   lib.body_ok(kinds, body, skip) -> nil when body (outside `skip` nodes)
--     stores only to registers and shared memory, passes a call no other
--     pointer and has no break, continue, return or goto
local support = require "klineage.transforms.support"

local M = {}

local PURE = { __ldg = true }

function M.range(n) local r = { n:range() }; return r[5], r[6] end

function M.line(text, b, e, comment_ok)
  local lb = b
  while lb > 1 and text:sub(lb - 1, lb - 1) ~= "\n" do lb = lb - 1 end
  if not text:sub(lb, b - 1):match("^[ \t]*$") then return nil end
  local le = text:find("\n", e + 1, true) or #text + 1
  local tail = text:sub(e + 1, le - 1)
  if not (tail:match("^[ \t]*$") or (comment_ok and tail:match("^[ \t]*//"))) then return nil end
  return lb, le
end

function M.indent(text, b)
  local lb = b
  while lb > 1 and text:sub(lb - 1, lb - 1) ~= "\n" do lb = lb - 1 end
  return text:sub(lb, b - 1):match("^[ \t]*")
end

function M.root(n)
  while n do
    local k = n.kind
    if k == "ident" then return n end
    if k == "index" or k == "member" then n = n:field("object")
    elseif k == "paren" or k == "unary" then n = n:children()[1]
    elseif k == "cast" or k == "cxx_cast" then local c = n:children(); n = c[#c]
    elseif k == "binary" and (n.op == "+" or n.op == "-") then n = n:field("lhs")
    else return nil end
  end
end

-- Locals declared without '*' are registers (or local memory) whatever
-- their dims; __shared__ arrays and pointers initialized from them (and
-- never assigned again) are shared; pointer parameters are param.
function M.kinds(unit, fn)
  local out = {}
  for _, p in ipairs(fn:params()) do
    if p.name and p.name ~= "" then out[p.name] = (p.pointer_depth or 0) > 0 and "param" or (p.reference and "other" or "register") end
  end
  local body = fn:body()
  local assigned = {}
  for a in body:walk({ "assign" }) do
    local l = a:field("lhs")
    if l and l.kind == "ident" then assigned[l:text()] = true end
  end
  local function mark(dd)
    for _, x in ipairs(dd.declarators) do
      local name = x.name and x.name.text
      if name then
        local kind
        if dd.shared then kind = "shared"
        elseif x.node:text():match("^%s*&") or (dd.type and dd.type.text:find("&", 1, true)) then kind = "other" -- a reference: where it points is unknown
        elseif (x.stars or 0) == 0 then kind = "register"
        elseif x.init and not assigned[name] then kind = "pending" else kind = "other" end
        if out[name] and out[name] ~= kind then kind = "other" end
        out[name] = kind
      end
    end
  end
  for _, dd in ipairs(unit:declarations()) do if dd.shared then mark(dd) end end
  local pending = {}
  for d in body:walk({ "decl" }) do
    local dd = d:declaration()
    if dd and not dd.alias then
      mark(dd)
      for _, x in ipairs(dd.declarators) do
        if x.name and out[x.name.text] == "pending" then pending[#pending + 1] = { x.name.text, x.node } end
      end
    end
  end
  -- A pointer is shared when its initializer's root is (in declaration order).
  for _, pd in ipairs(pending) do
    local init
    for _, c in ipairs(pd[2]:children()) do if c.kind ~= "ident" or c:text() ~= pd[1] then init = c end end
    local r = init and M.root(init)
    out[pd[1]] = r and out[r:text()] == "shared" and "shared" or "other"
  end
  return out
end

function M.flatten(n, op)
  if n.kind == "binary" and n.op == op then
    local l = M.flatten(n:field("lhs"), op)
    l[#l + 1] = n:field("rhs")
    return l
  end
  return { n }
end

function M.norm(s) return (s:gsub("%s+", "")) end

function M.stmts(compound)
  local out = {}
  for _, c in ipairs(compound:children()) do if c.kind ~= "pragma" then out[#out + 1] = c end end
  return out
end
function M.call_of(stmt)
  local c = stmt and stmt.kind == "expr_stmt" and stmt:children()[1]
  if c and c.kind == "call" and c:field("callee").kind == "ident" then return c end
end
function M.inside(n, outer) local b, e = M.range(n); local ob, oe = M.range(outer); return b >= ob and e <= oe end
function M.idents(n, out) out = out or {}; for id in n:walk({ "ident" }) do out[#out + 1] = id:text() end; return out end

-- Names the statements write: store roots, ++/-- operands, &x.
function M.written(list)
  local out = {}
  for _, s in ipairs(list) do
    for n in s:walk({ "assign", "unary", "postfix" }) do
      local target = n.kind == "assign" and n:field("lhs") or ((n.op == "++" or n.op == "--" or n.op == "&") and n:children()[1])
      local r = target and M.root(target)
      if r then out[r:text()] = true end
    end
  end
  return out
end

-- nil when load (the function called by `call`) only fills the staging
-- arguments from masked global reads; else why not.
function M.load_ok(unit, call, stage)
  local name = call:field("callee"):text()
  local fl
  for _, f in ipairs(support.functions(unit)) do
    if f:name() == name then if fl then return "two functions named " .. name end; fl = f end
  end
  if not fl then return name .. " is not defined in this unit" end
  local params, args = fl:params(), { table.unpack(call:children(), 2) }
  if #params ~= #args then return name .. "'s arity differs" end
  local out = {}
  for i, a in ipairs(args) do
    if a.kind == "ident" and stage[a:text()] then
      if (params[i].pointer_depth or 0) ~= 1 or params[i].const then return "a staging array goes to a const or non-pointer parameter" end
      out[params[i].name] = true
    end
  end
  local kinds = M.kinds(unit, fl)
  for n in fl:body():walk({ "assign", "unary", "postfix", "call", "index" }) do
    local k = n.kind
    if k == "call" then
      local c = n:field("callee")
      local cn = c.kind == "ident" and c:text() or ""
      if not (PURE[cn] or cn:match("^make_%w+$")) then return name .. " calls " .. n:text() end
    elseif k == "assign" or ((k == "unary" or k == "postfix") and (n.op == "++" or n.op == "--")) then
      local r = M.root(n.kind == "assign" and n:field("lhs") or n:children()[1])
      if not r or not (out[r:text()] or kinds[r:text()] == "register") then return name .. " writes " .. n:text() end
    end
    if k == "index" or (k == "unary" and n.op == "*") then
      local p = n:parent()
      local store = p and p.kind == "assign" and p:field("lhs").id == n.id
      local r = M.root(n)
      if not store and r and not out[r:text()] and kinds[r:text()] ~= "register" then
        local masked
        local q, child = p, n
        while q and not masked do
          if q.kind == "ternary" and q:field("then").id == child.id then masked = true end
          child, q = q, q:parent()
        end
        if not masked then return name .. " reads " .. n:text() .. " unmasked" end
      end
    end
  end
end

-- The loop's body stores only to registers and shared memory and hands
-- no other pointer to a call (`skip`: the load statements).
function M.body_ok(kinds, body, skip)
  for n in body:walk({ "assign", "unary", "postfix", "call", "break", "continue", "return", "goto" }) do
    local skipped = false
    for _, s in ipairs(skip) do if M.inside(n, s) then skipped = true end end
    if not skipped then
      local k = n.kind
      if k == "break" or k == "continue" or k == "return" or k == "goto" then return "the loop has a " .. k end
      if k == "call" then
        for i, a in ipairs(n:children()) do
          local r = i > 1 and M.root(a)
          local rk = r and kinds[r:text()]
          if rk == "param" or rk == "other" then return "a call gets " .. a:text() end
        end
      elseif k == "assign" or n.op == "++" or n.op == "--" then
        local r = M.root(k == "assign" and n:field("lhs") or n:children()[1])
        local rk = r and kinds[r:text()]
        if rk ~= "register" and rk ~= "shared" then return "the loop stores to " .. n:text() end
      end
    end
  end
end

return M
